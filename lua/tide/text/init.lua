--- tide.text: text processing for pretrained models. BertTokenizer reads the tokenizer files
--- Hugging Face writes (tokenizer.json, or vocab.txt + tokenizer_config.json) and gives the
--- same ids as its BertTokenizerFast.
local text = {}

text.BertTokenizer = require("tide.text.BertTokenizer")

return text
