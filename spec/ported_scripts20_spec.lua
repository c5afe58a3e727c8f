-- ported_scripts20_spec.lua — pytorch/tutorials beginner_source/translation_transformer.py ported
-- line for line: PositionalEncoding, TokenEmbedding, Seq2SeqTransformer over nn.Transformer,
-- generate_square_subsequent_mask, create_mask with padding masks, collate_fn with pad_sequence,
-- train_epoch / evaluate and greedy_decode / translate, on a tiny hand-made German-English corpus
-- (torchtext's Multi30k, spacy tokenizers and vocab replaced by a split on spaces and a Lua vocab);
-- and intermediate_source/transformer_building_blocks.py's MultiHeadAttention over SDPA.
-- The Python line stands above each Lua line that differs from it. Dims and token ids are 1-based.
local tide = require("tide")
local nn = tide.nn
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local function max_abs_diff(a, b)
    return (a - b):abs():max():item()
end

describe("translation_transformer.py", function()
    local SRC_LANGUAGE, TGT_LANGUAGE = "de", "en"

    -- a tiny parallel corpus in place of Multi30k
    local train_pairs = {
        { "ein mann läuft", "a man runs" },
        { "eine frau läuft", "a woman runs" },
        { "ein hund schläft", "a dog sleeps" },
        { "eine katze schläft", "a cat sleeps" },
        { "ein mann schläft", "a man sleeps" },
        { "eine frau schläft schnell", "a woman sleeps fast" },
        { "ein hund läuft schnell", "a dog runs fast" },
        { "eine katze läuft", "a cat runs" },
    }
    local val_pairs = { { "ein hund schläft", "a dog sleeps" }, { "eine katze läuft schnell", "a cat runs fast" } }

    -- token_transform[...] = get_tokenizer('spacy', ...): a split on spaces
    local token_transform = {}
    local function split(s)
        local out = {}
        for w in s:gmatch("%S+") do out[#out + 1] = w end
        return out
    end
    token_transform[SRC_LANGUAGE] = split
    token_transform[TGT_LANGUAGE] = split

    -- UNK_IDX, PAD_IDX, BOS_IDX, EOS_IDX = 0, 1, 2, 3  (1-based ids)
    local UNK_IDX, PAD_IDX, BOS_IDX, EOS_IDX = 1, 2, 3, 4
    local special_symbols = { "<unk>", "<pad>", "<bos>", "<eos>" }

    -- build_vocab_from_iterator(yield_tokens(train_iter, language)) with the special symbols
    -- inserted first and set_default_index(UNK_IDX): a vocab called on a list of tokens
    local function build_vocab(language_index)
        local itos, stoi = {}, {}
        for i, s in ipairs(special_symbols) do itos[i] = s; stoi[s] = i end
        for _, pair in ipairs(train_pairs) do
            for _, w in ipairs(split(pair[language_index])) do
                if not stoi[w] then itos[#itos + 1] = w; stoi[w] = #itos end
            end
        end
        local vocab = { itos = itos, stoi = stoi }
        -- len(vocab): a function, as Lua 5.1's # does not read __len on a table
        function vocab.len() return #itos end
        function vocab.lookup_tokens(ids)
            local out = {}
            for i, id in ipairs(ids) do out[i] = itos[id] end
            return out
        end
        return setmetatable(vocab, {
            __call = function(_, tokens)
                local out = {}
                for i, w in ipairs(tokens) do out[i] = stoi[w] or UNK_IDX end
                return out
            end,
        })
    end
    local vocab_transform = {}
    vocab_transform[SRC_LANGUAGE] = build_vocab(1)
    vocab_transform[TGT_LANGUAGE] = build_vocab(2)

    -- class PositionalEncoding(nn.Module):
    local PositionalEncoding = nn.Module:extend("PositionalEncoding")
    function PositionalEncoding:init(emb_size, dropout, maxlen)
        maxlen = maxlen or 5000
        -- den = torch.exp(- torch.arange(0, emb_size, 2)* math.log(10000) / emb_size)
        local den = tide.exp(-tide.arange(0, emb_size, 2) * math.log(10000) / emb_size)
        -- pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        local pos = tide.arange(0, maxlen):reshape(maxlen, 1)
        -- pos_embedding = torch.zeros((maxlen, emb_size))
        local pos_embedding = tide.zeros({ maxlen, emb_size })
        -- pos_embedding[:, 0::2] = torch.sin(pos * den)
        pos_embedding[{ {}, { 1, -1, 2 } }] = tide.sin(pos * den)
        -- pos_embedding[:, 1::2] = torch.cos(pos * den)
        pos_embedding[{ {}, { 2, -1, 2 } }] = tide.cos(pos * den)
        pos_embedding = pos_embedding:unsqueeze(-2)

        self.dropout = nn.Dropout(dropout)
        self:register_buffer("pos_embedding", pos_embedding)
    end

    function PositionalEncoding:forward(token_embedding)
        -- return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])
        return self.dropout(token_embedding + self.pos_embedding[{ { 1, token_embedding:size(1) }, {} }])
    end

    -- class TokenEmbedding(nn.Module):
    local TokenEmbedding = nn.Module:extend("TokenEmbedding")
    function TokenEmbedding:init(vocab_size, emb_size)
        self.embedding = nn.Embedding(vocab_size, emb_size)
        self.emb_size = emb_size
    end

    function TokenEmbedding:forward(tokens)
        -- return self.embedding(tokens.long()) * math.sqrt(self.emb_size)
        return self.embedding(tokens:long()) * math.sqrt(self.emb_size)
    end

    -- class Seq2SeqTransformer(nn.Module):
    local Seq2SeqTransformer = nn.Module:extend("Seq2SeqTransformer")
    function Seq2SeqTransformer:init(num_encoder_layers, num_decoder_layers, emb_size, nhead,
                                     src_vocab_size, tgt_vocab_size, dim_feedforward, dropout)
        dim_feedforward = dim_feedforward or 512
        dropout = dropout or 0.1
        -- self.transformer = Transformer(d_model=emb_size, nhead=nhead, ...)
        self.transformer = nn.Transformer({ d_model = emb_size,
                                            nhead = nhead,
                                            num_encoder_layers = num_encoder_layers,
                                            num_decoder_layers = num_decoder_layers,
                                            dim_feedforward = dim_feedforward,
                                            dropout = dropout })
        self.generator = nn.Linear(emb_size, tgt_vocab_size)
        self.src_tok_emb = TokenEmbedding(src_vocab_size, emb_size)
        self.tgt_tok_emb = TokenEmbedding(tgt_vocab_size, emb_size)
        -- self.positional_encoding = PositionalEncoding(emb_size, dropout=dropout)
        -- (a keyword to the script's own class: Lua passes it by position)
        self.positional_encoding = PositionalEncoding(emb_size, dropout)
    end

    function Seq2SeqTransformer:forward(src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask,
                                        memory_key_padding_mask)
        local src_emb = self.positional_encoding(self.src_tok_emb(src))
        local tgt_emb = self.positional_encoding(self.tgt_tok_emb(trg))
        -- outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None, src_padding_mask, tgt_padding_mask, memory_key_padding_mask)
        local outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, nil, src_padding_mask, tgt_padding_mask,
            memory_key_padding_mask)
        return self.generator(outs)
    end

    function Seq2SeqTransformer:encode(src, src_mask)
        -- return self.transformer.encoder(self.positional_encoding(self.src_tok_emb(src)), src_mask)
        return self.transformer.encoder(self.positional_encoding(
            self.src_tok_emb(src)), src_mask)
    end

    function Seq2SeqTransformer:decode(tgt, memory, tgt_mask)
        return self.transformer.decoder(self.positional_encoding(self.tgt_tok_emb(tgt)), memory, tgt_mask)
    end

    local DEVICE = tide.device("cpu")

    -- def generate_square_subsequent_mask(sz):
    local function generate_square_subsequent_mask(sz)
        -- mask = (torch.triu(torch.ones((sz, sz), device=DEVICE)) == 1).transpose(0, 1)
        local mask = (tide.triu(tide.ones({ sz, sz }, { device = DEVICE })):eq(1)):transpose(1, 2)
        -- mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
        mask = mask:float():masked_fill(mask:eq(0), -math.huge):masked_fill(mask:eq(1), 0.0)
        return mask
    end

    -- def create_mask(src, tgt):
    local function create_mask(src, tgt)
        -- src_seq_len = src.shape[0]
        local src_seq_len = src.shape[1]
        local tgt_seq_len = tgt.shape[1]

        local tgt_mask = generate_square_subsequent_mask(tgt_seq_len)
        -- src_mask = torch.zeros((src_seq_len, src_seq_len),device=DEVICE).type(torch.bool)
        local src_mask = tide.zeros({ src_seq_len, src_seq_len }, { device = DEVICE }):type(tide.bool)

        -- src_padding_mask = (src == PAD_IDX).transpose(0, 1)
        local src_padding_mask = (src:eq(PAD_IDX)):transpose(1, 2)
        local tgt_padding_mask = (tgt:eq(PAD_IDX)):transpose(1, 2)
        return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask
    end

    -- helper function to club together sequential operations
    -- def sequential_transforms(*transforms):
    local function sequential_transforms(...)
        local transforms = { ... }
        return function(txt_input)
            for _, transform in ipairs(transforms) do
                txt_input = transform(txt_input)
            end
            return txt_input
        end
    end

    -- def tensor_transform(token_ids: List[int]):
    local function tensor_transform(token_ids)
        -- return torch.cat((torch.tensor([BOS_IDX]), torch.tensor(token_ids), torch.tensor([EOS_IDX])))
        return tide.cat({ tide.tensor({ BOS_IDX }),
                          tide.tensor(token_ids),
                          tide.tensor({ EOS_IDX }) })
    end

    local src_text_transform = sequential_transforms(token_transform[SRC_LANGUAGE], -- Tokenization
                                                     vocab_transform[SRC_LANGUAGE], -- Numericalization
                                                     tensor_transform) -- Add BOS/EOS and create tensor
    local tgt_text_transform = sequential_transforms(token_transform[TGT_LANGUAGE],
                                                     vocab_transform[TGT_LANGUAGE],
                                                     tensor_transform)

    -- from torch.nn.utils.rnn import pad_sequence
    local pad_sequence = nn.utils.rnn.pad_sequence

    -- def collate_fn(batch: List[str]):
    local function collate_fn(batch)
        local src_batch, tgt_batch = {}, {}
        -- for src_sample, tgt_sample in batch:
        for _, sample in ipairs(batch) do
            local src_sample, tgt_sample = unpack(sample)
            -- src_batch.append(src_text_transform(src_sample.rstrip("\n")))
            src_batch[#src_batch + 1] = src_text_transform((src_sample:gsub("\n+$", "")))
            tgt_batch[#tgt_batch + 1] = tgt_text_transform((tgt_sample:gsub("\n+$", "")))
        end

        -- src_batch = pad_sequence(src_batch, padding_value=PAD_IDX)
        src_batch = pad_sequence(src_batch, { padding_value = PAD_IDX })
        tgt_batch = pad_sequence(tgt_batch, { padding_value = PAD_IDX })
        return src_batch, tgt_batch
    end

    -- def greedy_decode(model, src, src_mask, max_len, start_symbol):
    local function greedy_decode(model, src, src_mask, max_len, start_symbol)
        src = src:to(DEVICE)
        src_mask = src_mask:to(DEVICE)

        local memory = model:encode(src, src_mask)
        -- ys = torch.ones(1, 1).fill_(start_symbol).type(torch.long).to(DEVICE)
        local ys = tide.ones(1, 1):fill_(start_symbol):type(tide.long):to(DEVICE)
        -- for i in range(max_len-1):
        for _ = 1, max_len - 1 do
            memory = memory:to(DEVICE)
            -- tgt_mask = (generate_square_subsequent_mask(ys.size(0)).type(torch.bool)).to(DEVICE)
            local tgt_mask = (generate_square_subsequent_mask(ys:size(1))
                              :type(tide.bool)):to(DEVICE)
            local out = model:decode(ys, memory, tgt_mask)
            out = out:transpose(1, 2)
            -- prob = model.generator(out[:, -1])
            local prob = model.generator(out[{ {}, -1 }])
            -- _, next_word = torch.max(prob, dim=1)
            local _, next_word = tide.max(prob, { dim = 2 })
            next_word = next_word:item()

            -- ys = torch.cat([ys, torch.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
            ys = tide.cat({ ys,
                            tide.ones(1, 1):type_as(src.data):fill_(next_word) }, { dim = 1 })
            if next_word == EOS_IDX then
                break
            end
        end
        return ys
    end

    it("PositionalEncoding, the masks and collate_fn match PyTorch 1.13", function()
        local pe = PositionalEncoding(6, 0.1, 4)
        assert.are.same({ 4, 1, 6 }, pe.pos_embedding.shape)
        -- torch: PositionalEncoding(6, 0.1, 4).pos_embedding[2, 0]
        local want = tide.tensor({ 0.90929741, -0.41614684, 0.09269850, 0.99569422, 0.00430886, 0.99999070 })
        assert.is_true(max_abs_diff(pe.pos_embedding[{ 3, 1 }], want) < 1e-6)

        local ninf = -math.huge
        assert.are.same({ { 0, ninf, ninf }, { 0, 0, ninf }, { 0, 0, 0 } },
            generate_square_subsequent_mask(3):tolist())

        -- collate_fn on two pairs of different lengths: pad_sequence's (T, B) layout
        local src, tgt = collate_fn({ train_pairs[1], train_pairs[6] })
        assert.are.same({ 6, 2 }, src.shape)
        -- the shorter sentence is padded with PAD_IDX after its EOS
        assert.are.same({ BOS_IDX, 5, 6, 7, EOS_IDX, PAD_IDX }, src[{ {}, 1 }]:tolist())
        assert.are.equal("int64", src.dtype)
        local src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt[{ { 1, -2 }, {} }])
        assert.are.same({ 6, 6 }, src_mask.shape)
        assert.are.equal("bool", src_mask.dtype)
        assert.are.same({ 5, 5 }, tgt_mask.shape)
        assert.are.same({ { false, false, false, false, false, true }, { false, false, false, false, false, false } },
            src_padding_mask:tolist())
        assert.are.same({ 2, 5 }, tgt_padding_mask.shape)
    end)

    it("GAP fixed: PyTorch's `for src, tgt in loader` as ipairs(loader), loader[i] or `for b in loader do` raises, naming loader:iter()", function()
        local loader = tide.data.DataLoader(train_pairs, { batch_size = 4, collate_fn = collate_fn })
        -- loader[1] was nil: ipairs(loader) ran no step (a training loop that silently trained nothing)
        local ok, err = pcall(function() return loader[1] end)
        assert.is_false(ok)
        assert.matches("tide: DataLoader: loader%[1%]: a DataLoader is not a list", err)
        assert.matches("loader:iter%(%)", err)
        if _VERSION ~= "Lua 5.1" then -- Lua 5.1 and LuaJIT's ipairs read the table raw: no hook
            ok, err = pcall(function()
                for _, batch in ipairs(loader) do return batch end
            end)
            assert.is_false(ok)
            assert.matches("loader:iter%(%)", err)
        end
        ok, err = pcall(function()
            for batch in loader do return batch end -- luacheck: ignore
        end)
        assert.is_false(ok)
        assert.matches("tide: DataLoader: a DataLoader is not a function or an iterator", err)
        -- the loader still works, and its methods and fields read as before
        local n = 0
        for src, tgt in loader:iter() do
            n = n + 1
            assert.are.equal(src.shape[2], tgt.shape[2])
        end
        assert.are.equal(2, n)
        assert.are.equal(2, loader:len())
        assert.are.equal(4, loader.batch_size)
    end)

    it("Seq2SeqTransformer's logits with padding masks, its loss and greedy_decode match PyTorch 1.13", function()
        local m = Seq2SeqTransformer(1, 1, 4, 2, 7, 6, 8, 0.0)
        -- PyTorch's parameter names (layers.1 for its layers.0: tide's 1-based lists) and order; each set to sin(0.7 k + i) / 2 as in the Python check
        local want_names = split("transformer.encoder.layers.1.self_attn.in_proj_weight transformer.encoder.layers.1.self_attn.in_proj_bias transformer.encoder.layers.1.self_attn.out_proj.weight transformer.encoder.layers.1.self_attn.out_proj.bias transformer.encoder.layers.1.linear1.weight transformer.encoder.layers.1.linear1.bias transformer.encoder.layers.1.linear2.weight transformer.encoder.layers.1.linear2.bias transformer.encoder.layers.1.norm1.weight transformer.encoder.layers.1.norm1.bias transformer.encoder.layers.1.norm2.weight transformer.encoder.layers.1.norm2.bias transformer.encoder.norm.weight transformer.encoder.norm.bias transformer.decoder.layers.1.self_attn.in_proj_weight transformer.decoder.layers.1.self_attn.in_proj_bias transformer.decoder.layers.1.self_attn.out_proj.weight transformer.decoder.layers.1.self_attn.out_proj.bias transformer.decoder.layers.1.multihead_attn.in_proj_weight transformer.decoder.layers.1.multihead_attn.in_proj_bias transformer.decoder.layers.1.multihead_attn.out_proj.weight transformer.decoder.layers.1.multihead_attn.out_proj.bias transformer.decoder.layers.1.linear1.weight transformer.decoder.layers.1.linear1.bias transformer.decoder.layers.1.linear2.weight transformer.decoder.layers.1.linear2.bias transformer.decoder.layers.1.norm1.weight transformer.decoder.layers.1.norm1.bias transformer.decoder.layers.1.norm2.weight transformer.decoder.layers.1.norm2.bias transformer.decoder.layers.1.norm3.weight transformer.decoder.layers.1.norm3.bias transformer.decoder.norm.weight transformer.decoder.norm.bias generator.weight generator.bias src_tok_emb.embedding.weight tgt_tok_emb.embedding.weight")
        local got_names = {}
        for i, np in ipairs(m:named_parameters()) do
            local n, p = np[1], np[2]
            got_names[i] = n
            tide.no_grad(function()
                p:copy_((tide.sin(tide.arange(p:numel()) * 0.7 + (i - 1)) * 0.5):reshape(p.shape))
            end)
        end
        assert.are.same(want_names, got_names)
        m:eval()
        -- src = torch.tensor([[2, 2], [4, 5], [6, 3], [3, 1]]): its second sentence padded (1-based ids)
        local src = tide.tensor({ { 3, 3 }, { 5, 6 }, { 7, 4 }, { 4, 2 } })
        local tgt = tide.tensor({ { 3, 3 }, { 5, 6 }, { 4, 5 }, { 2, 4 } })
        local tgt_input = tgt[{ { 1, -2 }, {} }]
        local src_mask, tgt_mask, spm, tpm = create_mask(src, tgt_input)
        local logits = m(src, tgt_input, src_mask, tgt_mask, spm, tpm, spm)
        assert.are.same({ 3, 2, 6 }, logits.shape)
        assert.is_true(math.abs(logits:sum():item() - (-6.424586296081543)) < 1e-4)
        ported.assert_close_list({ -0.17724492, -0.53693938, -0.36378238, -0.42198300, 0.19635525, 0.22389154,
            -0.16883695, -0.55175662, -0.34426808, -0.44393939, 0.21821642, 0.20465155,
            -0.16089946, -0.54564756, -0.36371771, -0.41339669, 0.18011022, 0.24591817 },
            logits[{ {}, 2, {} }]:reshape(-1):tolist(), 1e-4, "logits[:, 1, :]")
        local loss = nn.CrossEntropyLoss({ ignore_index = PAD_IDX })(logits:reshape(-1, logits.shape[-1]),
            tgt[{ { 2, -1 }, {} }]:reshape(-1))
        assert.is_true(math.abs(loss:item() - 1.6964914798736572) < 1e-4)
        -- greedy_decode(m, src[:, :1], torch.zeros(4, 4).type(torch.bool), 6, BOS_IDX): [2, 5, 4, 5, 5, 5]
        local ys = greedy_decode(m, src[{ {}, { 1, 1 } }], tide.zeros(4, 4):type(tide.bool), 6, BOS_IDX)
        assert.are.same({ 3, 6, 5, 6, 6, 6 }, ys:flatten():tolist())
    end)

    it("Seq2SeqTransformer: xavier init, train_epoch / evaluate with padding masks, greedy_decode, translate",
        function()
        -- torch.manual_seed(0)
        tide.manual_seed(0)
        -- torch.use_deterministic_algorithms(True)
        tide.use_deterministic_algorithms(true)

        -- SRC_VOCAB_SIZE = len(vocab_transform[SRC_LANGUAGE])
        local SRC_VOCAB_SIZE = vocab_transform[SRC_LANGUAGE].len()
        local TGT_VOCAB_SIZE = vocab_transform[TGT_LANGUAGE].len()
        local EMB_SIZE = 16
        local NHEAD = 2
        local FFN_HID_DIM = 16
        local BATCH_SIZE = 4
        local NUM_ENCODER_LAYERS = 1
        local NUM_DECODER_LAYERS = 1

        local transformer = Seq2SeqTransformer(NUM_ENCODER_LAYERS, NUM_DECODER_LAYERS, EMB_SIZE, NHEAD,
            SRC_VOCAB_SIZE, TGT_VOCAB_SIZE, FFN_HID_DIM)

        -- for p in transformer.parameters():
        for _, p in ipairs(transformer:parameters()) do
            if p:dim() > 1 then
                nn.init.xavier_uniform_(p)
            end
        end

        transformer = transformer:to(DEVICE)

        -- loss_fn = torch.nn.CrossEntropyLoss(ignore_index=PAD_IDX)
        local loss_fn = tide.nn.CrossEntropyLoss({ ignore_index = PAD_IDX })

        -- optimizer = torch.optim.Adam(transformer.parameters(), lr=0.0001, betas=(0.9, 0.98), eps=1e-9)
        -- (lr 0.01 so that a few steps on the tiny corpus move the loss)
        local optimizer = tide.optim.Adam(transformer:parameters(), { lr = 0.01, betas = { 0.9, 0.98 }, eps = 1e-9 })

        local DataLoader = tide.data.DataLoader

        -- def train_epoch(model, optimizer):
        local function train_epoch(model, optimizer) -- luacheck: ignore 431
            model:train()
            local losses = 0
            -- train_iter = Multi30k(split='train', language_pair=(SRC_LANGUAGE, TGT_LANGUAGE))
            local train_iter = train_pairs
            -- train_dataloader = DataLoader(train_iter, batch_size=BATCH_SIZE, collate_fn=collate_fn)
            local train_dataloader = DataLoader(train_iter, { batch_size = BATCH_SIZE, collate_fn = collate_fn })

            -- for src, tgt in tqdm(train_dataloader):  (ipairs(train_dataloader) raises, naming iter())
            for src, tgt in train_dataloader:iter() do
                src = src:to(DEVICE)
                tgt = tgt:to(DEVICE)

                -- tgt_input = tgt[:-1, :]
                local tgt_input = tgt[{ { 1, -2 }, {} }]

                local src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)

                local logits = model(src, tgt_input, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask,
                    src_padding_mask)

                optimizer:zero_grad()

                -- tgt_out = tgt[1:, :]
                local tgt_out = tgt[{ { 2, -1 }, {} }]
                -- loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
                local loss = loss_fn(logits:reshape(-1, logits.shape[-1]), tgt_out:reshape(-1))
                loss:backward()

                optimizer:step()
                losses = losses + loss:item()
            end

            -- return losses / len(train_dataloader)
            return losses / train_dataloader:len()
        end

        -- def evaluate(model):
        local function evaluate(model)
            model:eval()
            local losses = 0

            local val_iter = val_pairs
            local val_dataloader = DataLoader(val_iter, { batch_size = BATCH_SIZE, collate_fn = collate_fn })

            for src, tgt in val_dataloader:iter() do
                src = src:to(DEVICE)
                tgt = tgt:to(DEVICE)

                local tgt_input = tgt[{ { 1, -2 }, {} }]

                local src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)

                local logits = model(src, tgt_input, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask,
                    src_padding_mask)

                local tgt_out = tgt[{ { 2, -1 }, {} }]
                local loss = loss_fn(logits:reshape(-1, logits.shape[-1]), tgt_out:reshape(-1))
                losses = losses + loss:item()
            end

            return losses / val_dataloader:len()
        end

        local NUM_EPOCHS = 6
        local train_losses, val_losses = {}, {}
        -- for epoch in range(1, NUM_EPOCHS+1):
        for epoch = 1, NUM_EPOCHS do
            local train_loss = train_epoch(transformer, optimizer)
            local val_loss = evaluate(transformer)
            assert_finite(train_loss, "train loss")
            assert_finite(val_loss, "val loss")
            train_losses[epoch], val_losses[epoch] = train_loss, val_loss
        end
        assert.is_true(train_losses[NUM_EPOCHS] < train_losses[1])
        assert.is_true(val_losses[NUM_EPOCHS] < val_losses[1])

        -- def translate(model: torch.nn.Module, src_sentence: str):
        local function translate(model, src_sentence)
            model:eval()
            local src = src_text_transform(src_sentence):view(-1, 1)
            local num_tokens = src.shape[1]
            -- src_mask = (torch.zeros(num_tokens, num_tokens)).type(torch.bool)
            local src_mask = (tide.zeros(num_tokens, num_tokens)):type(tide.bool)
            -- tgt_tokens = greedy_decode(model, src, src_mask, max_len=num_tokens + 5, start_symbol=BOS_IDX).flatten()
            local tgt_tokens = greedy_decode(
                model, src, src_mask, num_tokens + 5, BOS_IDX):flatten()
            -- return " ".join(vocab_transform[TGT_LANGUAGE].lookup_tokens(list(tgt_tokens.cpu().numpy()))).replace("<bos>", "").replace("<eos>", "")
            return (table.concat(vocab_transform[TGT_LANGUAGE].lookup_tokens(tgt_tokens:cpu():tolist()), " ")
                :gsub("<bos>", ""):gsub("<eos>", ""))
        end

        local out = translate(transformer, "ein hund läuft")
        assert.are.equal("string", type(out))
        -- greedy decoding starts with BOS and stops at EOS or max_len
        local ys = greedy_decode(transformer, src_text_transform("ein hund läuft"):view(-1, 1),
            tide.zeros(5, 5):type(tide.bool), 10, BOS_IDX)
        assert.are.equal(BOS_IDX, ys[{ 1, 1 }]:item())
        assert.is_true(ys.shape[1] <= 10 and ys.shape[2] == 1)
        assert.are.equal("int64", ys.dtype)
        tide.use_deterministic_algorithms(false)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. intermediate_source/transformer_building_blocks.py: its MultiHeadAttention (padded, not
-- nested, tensors: tide has no torch.nested) over F.scaled_dot_product_attention, checked as the
-- tutorial checks it, against nn.MultiheadAttention with the same weights
---------------------------------------------------------------------------------------------
describe("transformer_building_blocks.py", function()
    local F = nn.functional
    -- class MultiHeadAttention(nn.Module):
    local MultiHeadAttention = nn.Module:extend("MultiHeadAttention")
    function MultiHeadAttention:init(E_q, E_k, E_v, E_total, nheads, dropout, bias, device, dtype)
        dropout = dropout or 0.0
        if bias == nil then bias = true end
        -- factory_kwargs = {"device": device, "dtype": dtype}
        local factory_kwargs = { device = device, dtype = dtype }
        self.nheads = nheads
        self.dropout = dropout
        self._qkv_same_embed_dim = E_q == E_k and E_q == E_v
        if self._qkv_same_embed_dim then
            -- self.packed_proj = nn.Linear(E_q, E_total * 3, bias=bias, **factory_kwargs)
            self.packed_proj = nn.Linear(E_q, E_total * 3, { bias = bias, device = factory_kwargs.device,
                dtype = factory_kwargs.dtype })
        else
            self.q_proj = nn.Linear(E_q, E_total, { bias = bias, device = device, dtype = dtype })
            self.k_proj = nn.Linear(E_k, E_total, { bias = bias, device = device, dtype = dtype })
            self.v_proj = nn.Linear(E_v, E_total, { bias = bias, device = device, dtype = dtype })
        end
        local E_out = E_q
        self.out_proj = nn.Linear(E_total, E_out, { bias = bias, device = device, dtype = dtype })
        -- assert E_total % nheads == 0, "Embedding dim is not divisible by nheads"
        assert(E_total % nheads == 0, "Embedding dim is not divisible by nheads")
        -- self.E_head = E_total // nheads
        self.E_head = math.floor(E_total / nheads)
        self.bias = bias
    end

    function MultiHeadAttention:forward(query, key, value, attn_mask, is_causal)
        is_causal = is_causal or false
        local q_weight, k_weight, v_weight, q_bias, k_bias, v_bias, result
        -- Step 1. Apply input projection
        if self._qkv_same_embed_dim then
            -- if query is key and key is value:
            if rawequal(query, key) and rawequal(key, value) then
                result = self.packed_proj(query)
                -- query, key, value = torch.chunk(result, 3, dim=-1)
                query, key, value = unpack(tide.chunk(result, 3, { dim = -1 }))
            else
                -- q_weight, k_weight, v_weight = torch.chunk(self.packed_proj.weight, 3, dim=0)
                q_weight, k_weight, v_weight = unpack(tide.chunk(
                    self.packed_proj.weight, 3, { dim = 1 }
                ))
                if self.bias then
                    q_bias, k_bias, v_bias = unpack(tide.chunk(
                        self.packed_proj.bias, 3, { dim = 1 }
                    ))
                else
                    q_bias, k_bias, v_bias = nil, nil, nil
                end
                query, key, value =
                    F.linear(query, q_weight, q_bias),
                    F.linear(key, k_weight, k_bias),
                    F.linear(value, v_weight, v_bias)
            end
        else
            query = self.q_proj(query)
            key = self.k_proj(key)
            value = self.v_proj(value)
        end

        -- Step 2. Split heads and prepare for SDPA
        -- query = query.unflatten(-1, [self.nheads, self.E_head]).transpose(1, 2)
        query = query:unflatten(-1, { self.nheads, self.E_head }):transpose(2, 3)
        key = key:unflatten(-1, { self.nheads, self.E_head }):transpose(2, 3)
        value = value:unflatten(-1, { self.nheads, self.E_head }):transpose(2, 3)

        -- Step 3. Run SDPA
        -- attn_output = F.scaled_dot_product_attention(query, key, value, dropout_p=self.dropout, is_causal=is_causal)
        local attn_output = F.scaled_dot_product_attention(
            query, key, value, { attn_mask = attn_mask, dropout_p = self.dropout, is_causal = is_causal }
        )
        -- attn_output = attn_output.transpose(1, 2).flatten(-2)
        attn_output = attn_output:transpose(2, 3):flatten(-2)

        -- Step 4. Apply output projection
        attn_output = self.out_proj(attn_output)

        return attn_output
    end

    it("MultiHeadAttention over SDPA matches nn.MultiheadAttention (self- and cross-attention, causal)", function()
        tide.manual_seed(3)
        local N, L, E_total, nheads = 2, 5, 8, 2
        local E_q, E_k, E_v = E_total, E_total, E_total
        local mha = MultiHeadAttention(E_q, E_k, E_v, E_total, nheads, 0.0, true)
        -- vanilla_mha_layer = nn.MultiheadAttention(E_q, nheads, dropout=dropout, batch_first=True, bias=bias)
        local vanilla_mha_layer = nn.MultiheadAttention(E_q, nheads, { dropout = 0.0, batch_first = true, bias = true })
        -- mha_layer.out_proj.weight = nn.Parameter(vanilla_mha_layer.out_proj.weight.clone().detach())
        mha.out_proj.weight = nn.Parameter(vanilla_mha_layer.out_proj.weight:clone():detach())
        mha.packed_proj.weight = nn.Parameter(vanilla_mha_layer.in_proj_weight:clone():detach())
        mha.out_proj.bias = nn.Parameter(vanilla_mha_layer.out_proj.bias:clone():detach())
        mha.packed_proj.bias = nn.Parameter(vanilla_mha_layer.in_proj_bias:clone():detach())

        local x = tide.randn(N, L, E_q)
        -- self-attention: query is key is value, the packed projection
        local out = mha(x, x, x)
        -- padded_result, _ = vanilla_mha_layer(query, key, value, need_weights=False)
        local want = vanilla_mha_layer(x, x, x, { need_weights = false })
        assert.are.same({ N, L, E_q }, out.shape)
        assert.is_true(max_abs_diff(out, want) < 1e-5)
        -- cross-attention: the weight split by torch.chunk(..., dim=0)
        local mem = tide.randn(N, 3, E_k)
        assert.is_true(max_abs_diff(mha(x, mem, mem), vanilla_mha_layer(x, mem, mem, { need_weights = false })) < 1e-5)
        -- is_causal=True is attn_mask = the square subsequent mask
        local causal = nn.Transformer.generate_square_subsequent_mask(L)
        assert.is_true(max_abs_diff(mha(x, x, x, nil, true),
            vanilla_mha_layer(x, x, x, { attn_mask = causal, need_weights = false })) < 1e-5)
        -- a training step through SDPA
        local opt = tide.optim.SGD(mha:parameters(), { lr = 0.1 })
        local loss0
        for _ = 1, 3 do
            local loss = mha(x, x, x):pow(2):mean()
            opt:zero_grad()
            loss:backward()
            opt:step()
            loss0 = loss0 or loss:item()
        end
        assert.is_true(mha(x, x, x):pow(2):mean():item() < loss0)
    end)
end)
