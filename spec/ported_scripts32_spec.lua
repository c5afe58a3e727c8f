-- ported_scripts32_spec.lua — Sebastian Raschka's "LLMs from scratch" (rasbt/LLMs-from-scratch)
-- ported line for line: ch07/01_main-chapter-code (gpt_instruction_finetuning.py and
-- previous_chapters.py: format_input and the Alpaca prompt, InstructionDataset,
-- custom_collate_fn padding with a pad id, ignore_index=-100 on all but the first pad,
-- allowed_max_length, DataLoader(collate_fn=partial(...)), calc_loss_batch / calc_loss_loader,
-- train_model_simple, generate with eos_id) and appendix-D (linear warmup, cosine decay,
-- clip_grad_norm_, track_lrs, find_highest_gradient, train_model), the learning rates checked
-- against the Python formula's values. A character-level tokenizer stands in for tiktoken; the
-- GPT is tiny (emb 16, 2 heads, 2 layers). The Python line stands above each Lua line that
-- differs from it; a line tide cannot write as Python does is marked `-- GAP:`. Dims and token
-- ids are 1-based.
local tide = require("tide")
local nn = tide.nn
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- previous_chapters.py: the GPT model
---------------------------------------------------------------------------------------------
-- class MultiHeadAttention(nn.Module):
local MultiHeadAttention = nn.Module:extend("MultiHeadAttention")
-- def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
--     super().__init__()
function MultiHeadAttention:init(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
    if qkv_bias == nil then qkv_bias = false end
    -- assert d_out % num_heads == 0, "d_out must be divisible by n_heads"
    assert(d_out % num_heads == 0, "d_out must be divisible by n_heads")
    self.d_out = d_out
    self.num_heads = num_heads
    -- self.head_dim = d_out // num_heads
    self.head_dim = math.floor(d_out / num_heads)
    -- self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
    self.W_query = nn.Linear(d_in, d_out, { bias = qkv_bias })
    self.W_key = nn.Linear(d_in, d_out, { bias = qkv_bias })
    self.W_value = nn.Linear(d_in, d_out, { bias = qkv_bias })
    self.out_proj = nn.Linear(d_out, d_out)
    self.dropout = nn.Dropout(dropout)
    -- self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
    self:register_buffer("mask", tide.triu(tide.ones(context_length, context_length), { diagonal = 1 }))
end

function MultiHeadAttention:forward(x)
    -- b, num_tokens, d_in = x.shape
    local b, num_tokens, d_in = unpack(x.shape) -- luacheck: ignore d_in
    local keys = self.W_key(x)
    local queries = self.W_query(x)
    local values = self.W_value(x)
    keys = keys:view(b, num_tokens, self.num_heads, self.head_dim)
    values = values:view(b, num_tokens, self.num_heads, self.head_dim)
    queries = queries:view(b, num_tokens, self.num_heads, self.head_dim)
    -- keys = keys.transpose(1, 2)
    keys = keys:transpose(2, 3)
    queries = queries:transpose(2, 3)
    values = values:transpose(2, 3)
    -- attn_scores = queries @ keys.transpose(2, 3)
    local attn_scores = queries:matmul(keys:transpose(3, 4))
    -- mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
    local mask_bool = self.mask:bool()[{ { 1, num_tokens }, { 1, num_tokens } }]
    -- attn_scores.masked_fill_(mask_bool, -torch.inf)
    attn_scores:masked_fill_(mask_bool, -tide.inf)
    -- attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
    local attn_weights = tide.softmax(attn_scores / keys.shape[-1] ^ 0.5, { dim = -1 })
    attn_weights = self.dropout(attn_weights)
    -- context_vec = (attn_weights @ values).transpose(1, 2)
    local context_vec = attn_weights:matmul(values):transpose(2, 3)
    context_vec = context_vec:reshape(b, num_tokens, self.d_out)
    context_vec = self.out_proj(context_vec)
    return context_vec
end

-- class LayerNorm(nn.Module):
local LayerNorm = nn.Module:extend("LayerNorm")
function LayerNorm:init(emb_dim)
    self.eps = 1e-5
    self.scale = nn.Parameter(tide.ones(emb_dim))
    self.shift = nn.Parameter(tide.zeros(emb_dim))
end

function LayerNorm:forward(x)
    -- mean = x.mean(dim=-1, keepdim=True)
    local mean = x:mean({ dim = -1, keepdim = true })
    -- var = x.var(dim=-1, keepdim=True, unbiased=False)
    local var = x:var({ dim = -1, keepdim = true, unbiased = false })
    -- norm_x = (x - mean) / torch.sqrt(var + self.eps)
    local norm_x = (x - mean) / tide.sqrt(var + self.eps)
    return self.scale * norm_x + self.shift
end

-- class GELU(nn.Module):
local GELU = nn.Module:extend("GELU")
function GELU:forward(x)
    -- return 0.5 * x * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi)) * (x + 0.044715 * torch.pow(x, 3))))
    return 0.5 * x * (1 + tide.tanh(tide.sqrt(tide.tensor(2.0 / tide.pi)) * (x + 0.044715 * tide.pow(x, 3))))
end

-- class FeedForward(nn.Module):
local FeedForward = nn.Module:extend("FeedForward")
function FeedForward:init(cfg)
    self.layers = nn.Sequential(
        nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
        GELU(),
        nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"])
    )
end

function FeedForward:forward(x)
    return self.layers(x)
end

-- class TransformerBlock(nn.Module):
local TransformerBlock = nn.Module:extend("TransformerBlock")
function TransformerBlock:init(cfg)
    -- self.att = MultiHeadAttention(d_in=cfg["emb_dim"], d_out=cfg["emb_dim"], context_length=...,
    --     num_heads=cfg["n_heads"], dropout=cfg["drop_rate"], qkv_bias=cfg["qkv_bias"])
    self.att = MultiHeadAttention(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"],
        cfg["drop_rate"], cfg["n_heads"], cfg["qkv_bias"])
    self.ff = FeedForward(cfg)
    self.norm1 = LayerNorm(cfg["emb_dim"])
    self.norm2 = LayerNorm(cfg["emb_dim"])
    self.drop_resid = nn.Dropout(cfg["drop_rate"])
end

function TransformerBlock:forward(x)
    local shortcut = x
    x = self.norm1(x)
    x = self.att(x)
    x = self.drop_resid(x)
    x = x + shortcut

    shortcut = x
    x = self.norm2(x)
    x = self.ff(x)
    x = self.drop_resid(x)
    x = x + shortcut
    return x
end

-- class GPTModel(nn.Module):
local GPTModel = nn.Module:extend("GPTModel")
function GPTModel:init(cfg)
    self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
    self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
    self.drop_emb = nn.Dropout(cfg["drop_rate"])
    -- self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
    local blocks = {}
    for i = 1, cfg["n_layers"] do
        blocks[i] = TransformerBlock(cfg)
    end
    self.trf_blocks = nn.Sequential(unpack(blocks))
    self.final_norm = LayerNorm(cfg["emb_dim"])
    -- self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
    self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], { bias = false })
end

function GPTModel:forward(in_idx)
    -- batch_size, seq_len = in_idx.shape
    local batch_size, seq_len = unpack(in_idx.shape) -- luacheck: ignore batch_size
    local tok_embeds = self.tok_emb(in_idx)
    -- pos_embeds = self.pos_emb(torch.arange(seq_len, device=in_idx.device))
    -- (positions are 1-based: arange(1, seq_len + 1))
    local pos_embeds = self.pos_emb(tide.arange(1, seq_len + 1, { device = in_idx.device }))
    local x = tok_embeds + pos_embeds
    x = self.drop_emb(x)
    x = self.trf_blocks(x)
    x = self.final_norm(x)
    local logits = self.out_head(x)
    return logits
end

-- def generate_text_simple(model, idx, max_new_tokens, context_size):
local function generate_text_simple(model, idx, max_new_tokens, context_size)
    for _ = 1, max_new_tokens do
        -- idx_cond = idx[:, -context_size:]
        local idx_cond = idx[{ {}, { -context_size, -1 } }]
        -- with torch.no_grad(): logits = model(idx_cond)
        local logits = tide.no_grad(function() return model(idx_cond) end)
        -- logits = logits[:, -1, :]
        logits = logits[{ {}, -1, {} }]
        -- idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        local idx_next = tide.argmax(logits, { dim = -1, keepdim = true })
        -- idx = torch.cat((idx, idx_next), dim=1)
        idx = tide.cat({ idx, idx_next }, { dim = 2 })
    end
    return idx
end

-- def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
local function generate(model, idx, max_new_tokens, context_size, temperature, top_k, eos_id)
    temperature = temperature or 0.0
    for _ = 1, max_new_tokens do
        local idx_cond = idx[{ {}, { -context_size, -1 } }]
        local logits = tide.no_grad(function() return model(idx_cond) end)
        logits = logits[{ {}, -1, {} }]
        if top_k ~= nil then
            -- top_logits, _ = torch.topk(logits, top_k)
            local top_logits = tide.topk(logits, top_k)
            -- min_val = top_logits[:, -1]
            local min_val = top_logits[{ {}, -1 }]
            -- logits = torch.where(logits < min_val, torch.tensor(float("-inf")).to(logits.device), logits)
            -- (Lua's < on tensors gives one boolean: the elementwise form is lt)
            logits = tide.where(logits:lt(min_val), tide.tensor(-math.huge):to(logits.device), logits)
        end
        local idx_next
        if temperature > 0.0 then
            logits = logits / temperature
            -- logits = logits - logits.max(dim=-1, keepdim=True).values
            local max_values = logits:max({ dim = -1, keepdim = true })
            logits = logits - max_values
            local probs = tide.softmax(logits, { dim = -1 })
            -- idx_next = torch.multinomial(probs, num_samples=1)
            idx_next = tide.multinomial(probs, { num_samples = 1 })
        else
            idx_next = tide.argmax(logits, { dim = -1, keepdim = true })
        end
        -- if idx_next == eos_id:  (== on a tensor is identity in Lua: item() reads the one id)
        if idx_next:item() == eos_id then
            break
        end
        idx = tide.cat({ idx, idx_next }, { dim = 2 })
    end
    return idx
end

-- def text_to_token_ids(text, tokenizer):
local function text_to_token_ids(text, tokenizer)
    -- encoded = tokenizer.encode(text, allowed_special={"<|endoftext|>"})
    local encoded = tokenizer.encode(text, { allowed_special = { ["<|endoftext|>"] = true } })
    -- encoded_tensor = torch.tensor(encoded).unsqueeze(0)
    local encoded_tensor = tide.tensor(encoded):unsqueeze(1)
    return encoded_tensor
end

-- def token_ids_to_text(token_ids, tokenizer):
local function token_ids_to_text(token_ids, tokenizer)
    -- flat = token_ids.squeeze(0)
    local flat = token_ids:squeeze(1)
    return tokenizer.decode(flat:tolist())
end

-- def calc_loss_batch(input_batch, target_batch, model, device):
local function calc_loss_batch(input_batch, target_batch, model, device)
    -- input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    input_batch, target_batch = input_batch:to(device), target_batch:to(device)
    local logits = model(input_batch)
    -- loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())
    local loss = tide.nn.functional.cross_entropy(logits:flatten(1, 2), target_batch:flatten())
    return loss
end

-- def calc_loss_loader(data_loader, model, device, num_batches=None):
local function calc_loss_loader(data_loader, model, device, num_batches)
    local total_loss = 0.
    -- if len(data_loader) == 0:
    if data_loader:len() == 0 then
        return 0 / 0
    elseif num_batches == nil then
        num_batches = data_loader:len()
    else
        num_batches = math.min(num_batches, data_loader:len())
    end
    -- for i, (input_batch, target_batch) in enumerate(data_loader):
    for i, input_batch, target_batch in data_loader:enumerate() do
        -- if i < num_batches:
        if i < num_batches then
            local loss = calc_loss_batch(input_batch, target_batch, model, device)
            total_loss = total_loss + loss:item()
        else
            break
        end
    end
    return total_loss / num_batches
end

-- def evaluate_model(model, train_loader, val_loader, device, eval_iter):
local function evaluate_model(model, train_loader, val_loader, device, eval_iter)
    model:eval()
    -- with torch.no_grad():
    local train_loss, val_loss = tide.no_grad(function()
        return calc_loss_loader(train_loader, model, device, eval_iter),
            calc_loss_loader(val_loader, model, device, eval_iter)
    end)
    model:train()
    return train_loss, val_loss
end

-- def generate_and_print_sample(model, tokenizer, device, start_context):
local function generate_and_print_sample(model, tokenizer, device, start_context)
    model:eval()
    -- context_size = model.pos_emb.weight.shape[0]
    local context_size = model.pos_emb.weight.shape[1]
    local encoded = text_to_token_ids(start_context, tokenizer):to(device)
    local decoded_text = tide.no_grad(function()
        local token_ids = generate_text_simple(model, encoded, 5, context_size)
        return token_ids_to_text(token_ids, tokenizer)
    end)
    -- print(decoded_text.replace("\n", " ")) (kept quiet in the spec)
    model:train()
    return decoded_text:gsub("\n", " ")
end

-- A character-level stand-in for tiktoken.get_encoding("gpt2"): ids 1..#chars, and the last id,
-- vocab_size, is "<|endoftext|>" as 50256 is GPT-2's last id.
local function CharTokenizer(text)
    local chars, seen = {}, {}
    for c in text:gmatch(".") do
        if not seen[c] then
            seen[c] = true
            chars[#chars + 1] = c
        end
    end
    table.sort(chars)
    local stoi = {}
    for i, c in ipairs(chars) do stoi[c] = i end
    local tok = { n_vocab = #chars + 1, eot = #chars + 1 }
    function tok.encode(s, opts) -- luacheck: ignore opts
        local ids = {}
        for c in s:gmatch(".") do
            ids[#ids + 1] = assert(stoi[c], "unknown character " .. c)
        end
        return ids
    end
    function tok.decode(ids)
        local out = {}
        for i, id in ipairs(ids) do
            out[i] = chars[id] or "<|endoftext|>"
        end
        return table.concat(out)
    end
    return tok
end

---------------------------------------------------------------------------------------------
-- 1. ch07/01_main-chapter-code/gpt_instruction_finetuning.py
---------------------------------------------------------------------------------------------
-- def format_input(entry):
local function format_input(entry)
    -- instruction_text = (f"Below is an instruction ..." f"\n\n### Instruction:\n{entry['instruction']}")
    local instruction_text = "Below is an instruction that describes a task. " ..
        "Write a response that appropriately completes the request." ..
        "\n\n### Instruction:\n" .. entry["instruction"]
    -- input_text = f"\n\n### Input:\n{entry['input']}" if entry["input"] else ""
    local input_text = (entry["input"] ~= "") and ("\n\n### Input:\n" .. entry["input"]) or ""
    return instruction_text .. input_text
end

-- class InstructionDataset(Dataset):
local InstructionDataset = tide.data.Dataset:extend("InstructionDataset")
function InstructionDataset:init(data, tokenizer)
    self.data = data
    -- Pre-tokenize texts
    self.encoded_texts = {}
    -- for entry in data:
    for _, entry in ipairs(data) do
        local instruction_plus_input = format_input(entry)
        -- response_text = f"\n\n### Response:\n{entry['output']}"
        local response_text = "\n\n### Response:\n" .. entry["output"]
        local full_text = instruction_plus_input .. response_text
        -- self.encoded_texts.append(tokenizer.encode(full_text))
        self.encoded_texts[#self.encoded_texts + 1] = tokenizer.encode(full_text)
    end
end

function InstructionDataset:__getitem__(index)
    return self.encoded_texts[index]
end

function InstructionDataset:__len__()
    return #self.data
end

-- def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
-- (the Python keywords are a trailing table, as functools.partial passes them)
local function custom_collate_fn(batch, opts)
    opts = opts or {}
    local pad_token_id = opts.pad_token_id or 50256
    local ignore_index = opts.ignore_index or -100
    local allowed_max_length = opts.allowed_max_length
    local device = opts.device or "cpu"
    -- batch_max_length = max(len(item)+1 for item in batch)
    local batch_max_length = 0
    for _, item in ipairs(batch) do
        batch_max_length = math.max(batch_max_length, #item + 1)
    end

    -- inputs_lst, targets_lst = [], []
    local inputs_lst, targets_lst = {}, {}

    for _, item in ipairs(batch) do
        -- new_item = item.copy()
        local new_item = { unpack(item) }
        -- new_item += [pad_token_id]
        new_item[#new_item + 1] = pad_token_id
        -- padded = new_item + [pad_token_id] * (batch_max_length - len(new_item))
        local padded = { unpack(new_item) }
        for _ = 1, batch_max_length - #new_item do
            padded[#padded + 1] = pad_token_id
        end
        -- inputs = torch.tensor(padded[:-1])
        local inputs = tide.tensor({ unpack(padded, 1, #padded - 1) })
        -- targets = torch.tensor(padded[1:])
        local targets = tide.tensor({ unpack(padded, 2) })

        -- mask = targets == pad_token_id
        local mask = targets:eq(pad_token_id)
        -- indices = torch.nonzero(mask).squeeze()
        local indices = tide.nonzero(mask):squeeze()
        -- if indices.numel() > 1:
        if indices:numel() > 1 then
            -- targets[indices[1:]] = ignore_index
            targets[indices[{ { 2, -1 } }]] = ignore_index
        end

        -- if allowed_max_length is not None:
        if allowed_max_length ~= nil then
            -- inputs = inputs[:allowed_max_length]
            inputs = inputs[{ { 1, allowed_max_length } }]
            targets = targets[{ { 1, allowed_max_length } }]
        end

        -- inputs_lst.append(inputs)
        inputs_lst[#inputs_lst + 1] = inputs
        targets_lst[#targets_lst + 1] = targets
    end

    -- inputs_tensor = torch.stack(inputs_lst).to(device)
    local inputs_tensor = tide.stack(inputs_lst):to(device)
    local targets_tensor = tide.stack(targets_lst):to(device)
    return inputs_tensor, targets_tensor
end

-- functools.partial(f, **kw) for a function that takes its keywords in a trailing table
local function partial(f, kw)
    return function(batch)
        return f(batch, kw)
    end
end

-- A tiny instruction set in instruction-data.json's form
local instruction_data = {
    { instruction = "Spell the word.", input = "cat", output = "c-a-t" },
    { instruction = "Reverse the word.", input = "dog", output = "god" },
    { instruction = "Name a color.", input = "", output = "red" },
    { instruction = "Make it plural.", input = "cat", output = "cats" },
    { instruction = "Name an animal.", input = "", output = "dog" },
    { instruction = "Spell the word.", input = "god", output = "g-o-d" },
    { instruction = "Reverse the word.", input = "tac", output = "cat" },
    { instruction = "Make it plural.", input = "dog", output = "dogs" },
    { instruction = "Name a color.", input = "", output = "red" },
    { instruction = "Reverse the word.", input = "god", output = "dog" },
}

local function all_text(data)
    local parts = { "<" }
    for _, entry in ipairs(data) do
        parts[#parts + 1] = format_input(entry) .. "\n\n### Response:\n" .. entry["output"]
    end
    return table.concat(parts)
end

-- a dataset of (input, target) pairs, as GPTDatasetV1's __getitem__ returns
local PairDataset = tide.data.Dataset:extend("PairDataset")
function PairDataset:__len__() return 1 end
function PairDataset:__getitem__(idx) return tide.tensor({ idx }), tide.tensor({ idx + 1 }) end
local function GPTDatasetV1_for_collate() return PairDataset() end

describe("LLMs-from-scratch ch07 instruction finetuning", function()
    it("format_input writes the Alpaca-style prompt, with and without an input", function()
        local entry = instruction_data[1]
        -- model_input = format_input(data[50]); desired_response = f"\n\n### Response:\n{data[50]['output']}"
        local model_input = format_input(entry)
        local desired_response = "\n\n### Response:\n" .. entry["output"]
        assert.are.equal("Below is an instruction that describes a task. Write a response that " ..
            "appropriately completes the request.\n\n### Instruction:\nSpell the word.\n\n" ..
            "### Input:\ncat\n\n### Response:\nc-a-t", model_input .. desired_response)
        assert.are.equal("Below is an instruction that describes a task. Write a response that " ..
            "appropriately completes the request.\n\n### Instruction:\nName a color.",
            format_input(instruction_data[3]))
    end)

    it("custom_collate_fn pads, shifts, masks all but the first pad with -100, truncates", function()
        -- inputs_1 = [0, 1, 2, 3, 4]; inputs_2 = [5, 6]; inputs_3 = [7, 8, 9] (ids 1-based here)
        local inputs_1 = { 1, 2, 3, 4, 5 }
        local inputs_2 = { 6, 7 }
        local inputs_3 = { 8, 9, 10 }
        -- batch = (inputs_1, inputs_2, inputs_3)
        local batch = { inputs_1, inputs_2, inputs_3 }
        -- inputs, targets = custom_collate_fn(batch)   (pad_token_id 50256 -> 11)
        local inputs, targets = custom_collate_fn(batch, { pad_token_id = 11 })
        assert.are.same({ { 1, 2, 3, 4, 5 }, { 6, 7, 11, 11, 11 }, { 8, 9, 10, 11, 11 } }, inputs:tolist())
        assert.are.same({ { 2, 3, 4, 5, 11 }, { 7, 11, -100, -100, -100 }, { 9, 10, 11, -100, -100 } },
            targets:tolist())
        -- the list items are left as they were (item.copy())
        assert.are.same({ 6, 7 }, inputs_2)
        -- allowed_max_length=3
        inputs, targets = custom_collate_fn(batch, { pad_token_id = 11, allowed_max_length = 3 })
        assert.are.same({ { 1, 2, 3 }, { 6, 7, 11 }, { 8, 9, 10 } }, inputs:tolist())
        assert.are.same({ { 2, 3, 4 }, { 7, 11, -100 }, { 9, 10, 11 } }, targets:tolist())
        -- allowed_max_length beyond the length keeps everything, as a Python slice
        inputs = custom_collate_fn(batch, { pad_token_id = 11, allowed_max_length = 1024 })
        assert.are.same({ 3, 5 }, { inputs.shape[1], inputs.shape[2] })

        -- cross_entropy ignores the -100 targets: the loss equals the one over kept positions
        -- logits_2 = torch.tensor([[-1.0, 1.0], [-0.5, 1.5], [-0.5, 1.5]]); targets_3 = torch.tensor([0, 1, -100])
        local logits_2 = tide.tensor({ { -1.0, 1.0 }, { -0.5, 1.5 }, { -0.5, 1.5 } })
        local targets_3 = tide.tensor({ 1, 2, -100 })
        -- loss_3 = torch.nn.functional.cross_entropy(logits_2, targets_3)
        local loss_3 = tide.nn.functional.cross_entropy(logits_2, targets_3)
        -- PyTorch: tensor(1.1269) (the loss of the first two rows alone)
        assert(math.abs(loss_3:item() - 1.1269) < 1e-4, tostring(loss_3:item()))
        -- targets_1 = torch.tensor([0, 1]); loss_1 = cross_entropy(logits_1, targets_1): the same
        local loss_1 = tide.nn.functional.cross_entropy(logits_2[{ { 1, 2 } }], tide.tensor({ 1, 2 }))
        assert(math.abs(loss_1:item() - loss_3:item()) < 1e-6)
    end)

    it("a collate_fn's batch holds what __getitem__ returns (a list of ids), as PyTorch's", function()
        -- (gap fixed: each sample came wrapped in a one-element list, so len(item) was 1)
        local ds = InstructionDataset({ instruction_data[3], instruction_data[5] },
            CharTokenizer(all_text(instruction_data)))
        local seen
        local loader = tide.data.DataLoader(ds, { batch_size = 2, collate_fn = function(batch)
            seen = batch
            return #batch
        end })
        for _ in loader:iter() do end
        assert.are.same(ds.encoded_texts[1], seen[1])
        assert.are.same(ds[2], seen[2])
        -- a tuple sample (two values) still comes as the list of its fields
        local pairs_ds = GPTDatasetV1_for_collate()
        local got
        for b in tide.data.DataLoader(pairs_ds, { batch_size = 1, collate_fn = function(batch)
            got = batch
            return 1
        end }):iter() do assert(b == 1) end
        assert.are.equal(2, #got[1])
        assert.is_true(tide.is_tensor(got[1][1]) and tide.is_tensor(got[1][2]))
    end)

    it("InstructionDataset, DataLoader(collate_fn=partial(...)), train_model_simple, generate with eos_id",
        function()
            local data = instruction_data
            -- train_portion = int(len(data) * 0.85); test_portion = int(len(data) * 0.1)
            local train_portion = math.floor(#data * 0.85)
            local test_portion = math.floor(#data * 0.1)
            -- train_data = data[:train_portion]
            local train_data = { unpack(data, 1, train_portion) }
            -- test_data = data[train_portion:train_portion + test_portion]
            local test_data = { unpack(data, train_portion + 1, train_portion + test_portion) }
            -- val_data = data[train_portion + test_portion:]
            local val_data = { unpack(data, train_portion + test_portion + 1) }
            assert.are.equal(8, #train_data)
            assert.are.equal(1, #test_data)
            assert.are.equal(1, #val_data)

            -- tokenizer = tiktoken.get_encoding("gpt2")
            local tokenizer = CharTokenizer(all_text(data))
            local eos_id = tokenizer.eot
            -- device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            local device = tide.device("cpu")

            -- customized_collate_fn = partial(custom_collate_fn, device=device, allowed_max_length=1024)
            -- (pad_token_id: the tokenizer's <|endoftext|>, 50256 for GPT-2)
            local customized_collate_fn = partial(custom_collate_fn,
                { device = device, allowed_max_length = 1024, pad_token_id = eos_id })

            local num_workers = 0
            local batch_size = 4
            tide.manual_seed(123)

            local train_dataset = InstructionDataset(train_data, tokenizer)
            -- train_loader = DataLoader(train_dataset, batch_size=batch_size, collate_fn=customized_collate_fn,
            --     shuffle=True, drop_last=True, num_workers=num_workers)
            local train_loader = tide.data.DataLoader(train_dataset, {
                batch_size = batch_size, collate_fn = customized_collate_fn,
                shuffle = true, drop_last = true, num_workers = num_workers })
            local val_dataset = InstructionDataset(val_data, tokenizer)
            local val_loader = tide.data.DataLoader(val_dataset, {
                batch_size = batch_size, collate_fn = customized_collate_fn,
                shuffle = false, drop_last = false, num_workers = num_workers })
            assert.are.equal(2, train_loader:len())

            -- the loader's batches are custom_collate_fn's (inputs, targets)
            for inputs, targets in train_loader:iter() do
                assert.are.equal(batch_size, inputs.shape[1])
                assert.are.same(inputs.shape[2], targets.shape[2])
                assert.are.equal(tide.int64, targets.dtype)
                break
            end

            -- BASE_CONFIG = {"vocab_size": 50257, "context_length": 120, "drop_rate": 0.0,
            --     "qkv_bias": False, "emb_dim": 12, "n_layers": 1, "n_heads": 2}  (the test-mode model)
            local BASE_CONFIG = {
                vocab_size = tokenizer.n_vocab, context_length = 256, drop_rate = 0.0,
                qkv_bias = false, emb_dim = 16, n_layers = 2, n_heads = 2,
            }
            local model = GPTModel(BASE_CONFIG)
            model:eval()

            -- with torch.no_grad():
            local train_loss0, val_loss0 = tide.no_grad(function()
                -- train_loss = calc_loss_loader(train_loader, model, device, num_batches=5)
                return calc_loss_loader(train_loader, model, device, 5),
                    calc_loss_loader(val_loader, model, device, 5)
            end)
            assert_finite(train_loss0, "initial train loss")
            assert_finite(val_loss0, "initial val loss")

            -- optimizer = torch.optim.AdamW(model.parameters(), lr=0.00005, weight_decay=0.1)
            -- (a larger lr so that a few steps show)
            local optimizer = tide.optim.AdamW(model:parameters(), { lr = 0.01, weight_decay = 0.1 })
            local num_epochs = 3

            tide.manual_seed(123)
            -- train_losses, val_losses, tokens_seen = train_model_simple(model, train_loader, val_loader,
            --     optimizer, device, num_epochs=num_epochs, eval_freq=5, eval_iter=5,
            --     start_context=format_input(val_data[0]), tokenizer=tokenizer)
            local train_losses, val_losses, track_tokens_seen = {}, {}, {}
            local tokens_seen, global_step = 0, -1
            local eval_freq, eval_iter = 2, 5
            local samples = {}
            for epoch = 1, num_epochs do -- luacheck: ignore epoch
                model:train()
                for input_batch, target_batch in train_loader:iter() do
                    optimizer:zero_grad()
                    local loss = calc_loss_batch(input_batch, target_batch, model, device)
                    loss:backward()
                    optimizer:step()
                    tokens_seen = tokens_seen + input_batch:numel()
                    global_step = global_step + 1
                    if global_step % eval_freq == 0 then
                        local train_loss, val_loss = evaluate_model(model, train_loader, val_loader,
                            device, eval_iter)
                        train_losses[#train_losses + 1] = train_loss
                        val_losses[#val_losses + 1] = val_loss
                        track_tokens_seen[#track_tokens_seen + 1] = tokens_seen
                    end
                end
                samples[#samples + 1] = generate_and_print_sample(model, tokenizer, device,
                    format_input(val_data[1]))
            end
            assert.are.equal(3, #train_losses)
            for i = 1, #train_losses do
                assert_finite(train_losses[i], "train loss")
                assert_finite(val_losses[i], "val loss")
            end
            assert(train_losses[#train_losses] < train_loss0,
                ("train loss did not drop: %.4f -> %.4f"):format(train_loss0, train_losses[#train_losses]))
            assert(type(samples[1]) == "string" and not samples[1]:find("\n"))

            -- epochs_tensor = torch.linspace(0, num_epochs, len(train_losses))
            local epochs_tensor = tide.linspace(0, num_epochs, #train_losses)
            assert_close_list({ 0, 1.5, 3 }, epochs_tensor:tolist(), 1e-6, "epochs_tensor")

            -- for i, entry in tqdm(enumerate(test_data), total=len(test_data)):
            model:eval()
            for i, entry in ipairs(test_data) do
                local input_text = format_input(entry)
                -- token_ids = generate(model=model, idx=text_to_token_ids(input_text, tokenizer).to(device),
                --     max_new_tokens=256, context_size=BASE_CONFIG["context_length"], eos_id=50256)
                local token_ids = generate(model, text_to_token_ids(input_text, tokenizer):to(device),
                    8, BASE_CONFIG["context_length"], nil, nil, eos_id)
                local generated_text = token_ids_to_text(token_ids, tokenizer)
                -- response_text = generated_text[len(input_text):].replace("### Response:", "").strip()
                local response_text = generated_text:sub(#input_text + 1):gsub("### Response:", "", 1)
                response_text = response_text:match("^%s*(.-)%s*$")
                -- test_data[i]["model_response"] = response_text
                test_data[i]["model_response"] = response_text
                assert(token_ids.shape[2] <= #input_text + 8)
                assert.are.equal(input_text, generated_text:sub(1, #input_text))
            end
            assert.are.equal("string", type(test_data[1]["model_response"]))

            -- generate stops at eos_id: a model whose out_head always picks eos_id adds nothing
            tide.no_grad(function()
                model.final_norm.scale:zero_()
                model.final_norm.shift:fill_(1.0)
                model.out_head.weight:zero_()
                model.out_head.weight[eos_id]:fill_(1.0)
            end)
            local idx = text_to_token_ids("cat", tokenizer)
            local out = generate(model, idx, 5, BASE_CONFIG["context_length"], 0.0, nil, eos_id)
            assert.are.same(idx:tolist(), out:tolist())
        end)
end)

---------------------------------------------------------------------------------------------
-- 2. appendix-D/01_main-chapter-code/appendix-D.ipynb
---------------------------------------------------------------------------------------------
-- class GPTDatasetV1(Dataset):
local GPTDatasetV1 = tide.data.Dataset:extend("GPTDatasetV1")
function GPTDatasetV1:init(txt, tokenizer, max_length, stride)
    self.tokenizer = tokenizer
    self.input_ids = {}
    self.target_ids = {}
    -- token_ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})
    local token_ids = tokenizer.encode(txt, { allowed_special = { ["<|endoftext|>"] = true } })
    -- for i in range(0, len(token_ids) - max_length, stride):
    for i = 1, #token_ids - max_length, stride do
        -- input_chunk = token_ids[i:i + max_length]
        local input_chunk = { unpack(token_ids, i, i + max_length - 1) }
        -- target_chunk = token_ids[i + 1: i + max_length + 1]
        local target_chunk = { unpack(token_ids, i + 1, i + max_length) }
        self.input_ids[#self.input_ids + 1] = tide.tensor(input_chunk)
        self.target_ids[#self.target_ids + 1] = tide.tensor(target_chunk)
    end
end

function GPTDatasetV1:__len__()
    return #self.input_ids
end

function GPTDatasetV1:__getitem__(idx)
    return self.input_ids[idx], self.target_ids[idx]
end

-- def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128, shuffle=True, drop_last=True, num_workers=0):
local function create_dataloader_v1(txt, tokenizer, opts)
    -- tokenizer = tiktoken.get_encoding("gpt2")  (the char tokenizer is passed in)
    local dataset = GPTDatasetV1(txt, tokenizer, opts.max_length or 256, opts.stride or 128)
    -- dataloader = DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last, num_workers=num_workers)
    local dataloader = tide.data.DataLoader(dataset, {
        batch_size = opts.batch_size or 4, shuffle = opts.shuffle ~= false,
        drop_last = opts.drop_last ~= false, num_workers = opts.num_workers or 0 })
    return dataloader
end

-- the Python formula's values (PyTorch 1.13's venv, len(train_loader) = 5, n_epochs = 3)
local PY_WARMUP_ONLY = { 0.0001, 0.0034000000000000002, 0.006700000000000001, 0.01, 0.01, 0.01, 0.01,
    0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01 }
local PY_COSINE = { 0.0001, 0.0034000000000000002, 0.006700000000000001, 0.01, 0.009829799502313896,
    0.009330796891903272, 0.008536998372026804, 0.0075025000000000005, 0.0062978011302870915, 0.005005,
    0.0037121988697129088, 0.0025075000000000015, 0.0014730016279731956, 0.0006792031080967287,
    0.00018020049768610434 }
local PY_TRAIN_MODEL = { 1e-05, 0.00034, 0.00067, 0.001, 0.0009831332840130886, 0.0009336825748732972,
    0.000855017856687341, 0.0007525, 0.0006331154273257478, 0.000505, 0.0003768845726742522,
    0.00025750000000000013, 0.000154982143312659, 7.631742512670284e-05, 2.6866715986911242e-05 }

describe("LLMs-from-scratch appendix-D training loop bells and whistles", function()
    local text_data = ("Every effort moves you forward, every sunday. "):rep(2)
    local tokenizer = CharTokenizer(text_data)
    -- GPT_CONFIG_124M = {"vocab_size": 50257, "context_length": 256, "emb_dim": 768, "n_heads": 12,
    --     "n_layers": 12, "drop_rate": 0.1, "qkv_bias": False}  (shrunk)
    local GPT_CONFIG_124M = {
        vocab_size = tokenizer.n_vocab, context_length = 8, emb_dim = 16, n_heads = 2,
        n_layers = 2, drop_rate = 0.1, qkv_bias = false,
    }
    local device = tide.device("cpu")

    local function loaders()
        -- train_ratio = 0.90; split_idx = int(train_ratio * len(text_data))
        local train_ratio = 0.90
        local split_idx = math.floor(train_ratio * #text_data)
        tide.manual_seed(123)
        -- train_loader = create_dataloader_v1(text_data[:split_idx], batch_size=2,
        --     max_length=GPT_CONFIG_124M["context_length"], stride=GPT_CONFIG_124M["context_length"],
        --     drop_last=True, shuffle=True, num_workers=0)
        local train_loader = create_dataloader_v1(text_data:sub(1, split_idx), tokenizer, {
            batch_size = 2, max_length = GPT_CONFIG_124M["context_length"],
            stride = GPT_CONFIG_124M["context_length"], drop_last = true, shuffle = true, num_workers = 0 })
        local val_loader = create_dataloader_v1(text_data:sub(split_idx + 1), tokenizer, {
            batch_size = 2, max_length = GPT_CONFIG_124M["context_length"],
            stride = GPT_CONFIG_124M["context_length"], drop_last = false, shuffle = false, num_workers = 0 })
        return train_loader, val_loader
    end

    it("linear warmup and cosine decay written in the loop set param_groups' lr as Python's formula", function()
        tide.manual_seed(123)
        local model = GPTModel(GPT_CONFIG_124M)
        model:eval()
        local train_loader = loaders()
        assert.are.equal(5, train_loader:len())

        local n_epochs = 3
        local initial_lr = 0.0001
        local peak_lr = 0.01
        -- total_steps = len(train_loader) * n_epochs
        local total_steps = train_loader:len() * n_epochs
        -- warmup_steps = int(0.2 * total_steps) # 20% warmup
        local warmup_steps = math.floor(0.2 * total_steps)
        assert.are.equal(3, warmup_steps)

        local lr_increment = (peak_lr - initial_lr) / warmup_steps
        local global_step = -1
        local track_lrs = {}
        -- optimizer = torch.optim.AdamW(model.parameters(), weight_decay=0.1)
        local optimizer = tide.optim.AdamW(model:parameters(), { weight_decay = 0.1 })
        assert.are.equal(0.001, optimizer.param_groups[1]["lr"])

        for epoch = 1, n_epochs do -- luacheck: ignore epoch
            for input_batch, target_batch in train_loader:iter() do -- luacheck: ignore
                optimizer:zero_grad()
                global_step = global_step + 1
                local lr
                if global_step < warmup_steps then
                    lr = initial_lr + global_step * lr_increment
                else
                    lr = peak_lr
                end
                -- for param_group in optimizer.param_groups: param_group["lr"] = lr
                for _, param_group in ipairs(optimizer.param_groups) do
                    param_group["lr"] = lr
                end
                -- track_lrs.append(optimizer.param_groups[0]["lr"])
                track_lrs[#track_lrs + 1] = optimizer.param_groups[1]["lr"]
            end
        end
        assert_close_list(PY_WARMUP_ONLY, track_lrs, 1e-15, "warmup lrs")

        -- min_lr = 0.1 * initial_lr
        local min_lr = 0.1 * initial_lr
        track_lrs = {}
        -- total_training_steps = len(train_loader) * n_epochs
        local total_training_steps = train_loader:len() * n_epochs
        lr_increment = (peak_lr - initial_lr) / warmup_steps
        global_step = -1
        for epoch = 1, n_epochs do -- luacheck: ignore epoch
            for input_batch, target_batch in train_loader:iter() do -- luacheck: ignore
                optimizer:zero_grad()
                global_step = global_step + 1
                local lr
                if global_step < warmup_steps then
                    lr = initial_lr + global_step * lr_increment
                else
                    -- progress = ((global_step - warmup_steps) / (total_training_steps - warmup_steps))
                    local progress = ((global_step - warmup_steps) / (total_training_steps - warmup_steps))
                    -- lr = min_lr + (peak_lr - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))
                    lr = min_lr + (peak_lr - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))
                end
                for _, param_group in ipairs(optimizer.param_groups) do
                    param_group["lr"] = lr
                end
                track_lrs[#track_lrs + 1] = optimizer.param_groups[1]["lr"]
            end
        end
        assert_close_list(PY_COSINE, track_lrs, 1e-12, "cosine lrs")

        -- the lr written into param_groups is the one step() uses: lr 0 (and weight decay with
        -- it) leaves the weights as they were
        local input_batch, target_batch
        for x, y in train_loader:iter() do input_batch, target_batch = x, y; break end
        for _, param_group in ipairs(optimizer.param_groups) do param_group["lr"] = 0 end
        local before = model.out_head.weight:clone()
        optimizer:zero_grad()
        calc_loss_batch(input_batch, target_batch, model, device):backward()
        optimizer:step()
        assert.is_true(tide.equal(before, model.out_head.weight))
        for _, param_group in ipairs(optimizer.param_groups) do param_group["lr"] = 0.01 end
        optimizer:step()
        assert.is_false(tide.equal(before, model.out_head.weight))
    end)

    it("find_highest_gradient and clip_grad_norm_(model.parameters(), max_norm=1.0)", function()
        local train_loader = loaders()
        local input_batch, target_batch
        for x, y in train_loader:iter() do input_batch, target_batch = x, y; break end

        tide.manual_seed(123)
        local model = GPTModel(GPT_CONFIG_124M)
        model:to(device)
        local loss = calc_loss_batch(input_batch, target_batch, model, device)
        loss:backward()

        -- def find_highest_gradient(model):
        local function find_highest_gradient(m)
            local max_grad = nil
            -- for param in model.parameters():
            for _, param in ipairs(m:parameters()) do
                -- if param.grad is not None:
                if param.grad ~= nil then
                    -- grad_values = param.grad.data.flatten()
                    local grad_values = param.grad.data:flatten()
                    -- max_grad_param = grad_values.max()
                    local max_grad_param = grad_values:max()
                    -- if max_grad is None or max_grad_param > max_grad:
                    if max_grad == nil or max_grad_param > max_grad then
                        max_grad = max_grad_param
                    end
                end
            end
            return max_grad
        end

        local before = find_highest_gradient(model)
        -- the largest gradient entry, over all parameters
        local want = -math.huge
        local sq = 0
        for _, p in ipairs(model:parameters()) do
            want = math.max(want, p.grad:max():item())
            sq = sq + (p.grad * p.grad):sum():item()
        end
        assert(math.abs(before:item() - want) < 1e-7)
        local total_norm = math.sqrt(sq)
        assert(total_norm > 1.0, "the test wants a gradient norm above max_norm: " .. total_norm)

        -- torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        -- (tide returns the total norm as a number, PyTorch a 0-dim tensor)
        local returned = tide.nn.utils.clip_grad_norm_(model:parameters(), { max_norm = 1.0 })
        assert(math.abs(tonumber(returned) - total_norm) < 1e-4 * total_norm)
        local after = find_highest_gradient(model)
        -- every gradient is scaled by max_norm / (total_norm + 1e-6)
        assert(math.abs(after:item() - before:item() * 1.0 / (total_norm + 1e-6)) < 1e-6)
        sq = 0
        for _, p in ipairs(model:parameters()) do
            sq = sq + (p.grad * p.grad):sum():item()
        end
        assert(math.abs(math.sqrt(sq) - 1.0) < 1e-4)
    end)

    it("train_model: warmup, cosine decay and clipping after warmup; track_lrs as Python's", function()
        local train_loader, val_loader = loaders()
        local ORIG_BOOK_VERSION = false

        -- def train_model(model, train_loader, val_loader, optimizer, device, n_epochs, eval_freq,
        --     eval_iter, start_context, tokenizer, warmup_steps, initial_lr=3e-05, min_lr=1e-6):
        local function train_model(model, train_loader_, val_loader_, optimizer, device_, n_epochs,
                                   eval_freq, eval_iter, start_context, tokenizer_, warmup_steps,
                                   initial_lr, min_lr)
            initial_lr = initial_lr or 3e-05
            min_lr = min_lr or 1e-6
            local train_losses, val_losses, track_tokens_seen, track_lrs = {}, {}, {}, {}
            local tokens_seen, global_step = 0, -1
            -- peak_lr = optimizer.param_groups[0]["lr"]
            local peak_lr = optimizer.param_groups[1]["lr"]
            -- total_training_steps = len(train_loader) * n_epochs
            local total_training_steps = train_loader_:len() * n_epochs
            local lr_increment = (peak_lr - initial_lr) / warmup_steps
            local clipped = 0

            for epoch = 1, n_epochs do -- luacheck: ignore epoch
                model:train()
                for input_batch, target_batch in train_loader_:iter() do
                    optimizer:zero_grad()
                    global_step = global_step + 1
                    local lr
                    if global_step < warmup_steps then
                        lr = initial_lr + global_step * lr_increment
                    else
                        local progress = ((global_step - warmup_steps) /
                            (total_training_steps - warmup_steps))
                        lr = min_lr + (peak_lr - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))
                    end
                    for _, param_group in ipairs(optimizer.param_groups) do
                        param_group["lr"] = lr
                    end
                    -- track_lrs.append(lr)
                    track_lrs[#track_lrs + 1] = lr

                    local loss = calc_loss_batch(input_batch, target_batch, model, device_)
                    loss:backward()

                    if ORIG_BOOK_VERSION then
                        if global_step > warmup_steps then
                            tide.nn.utils.clip_grad_norm_(model:parameters(), { max_norm = 1.0 })
                        end
                    else
                        if global_step >= warmup_steps then
                            tide.nn.utils.clip_grad_norm_(model:parameters(), { max_norm = 1.0 })
                            clipped = clipped + 1
                        end
                    end

                    optimizer:step()
                    tokens_seen = tokens_seen + input_batch:numel()

                    if global_step % eval_freq == 0 then
                        local train_loss, val_loss = evaluate_model(model, train_loader_, val_loader_,
                            device_, eval_iter)
                        train_losses[#train_losses + 1] = train_loss
                        val_losses[#val_losses + 1] = val_loss
                        track_tokens_seen[#track_tokens_seen + 1] = tokens_seen
                    end
                end
                generate_and_print_sample(model, tokenizer_, device_, start_context)
            end
            assert.are.equal(total_training_steps - warmup_steps, clipped)
            return train_losses, val_losses, track_tokens_seen, track_lrs
        end

        tide.manual_seed(123)
        local model = GPTModel(GPT_CONFIG_124M)
        model:to(device)
        local initial_train, initial_val = evaluate_model(model, train_loader, val_loader, device, 5)
        assert_finite(initial_val, "initial val loss")

        -- peak_lr = 0.001
        local peak_lr = 0.001
        -- optimizer = torch.optim.AdamW(model.parameters(), lr=peak_lr, weight_decay=0.1)
        local optimizer = tide.optim.AdamW(model:parameters(), { lr = peak_lr, weight_decay = 0.1 })
        -- tokenizer = tiktoken.get_encoding("gpt2")
        local n_epochs = 3
        local warmup_steps = math.floor(0.2 * train_loader:len() * n_epochs)
        -- train_losses, val_losses, tokens_seen, lrs = train_model(model, train_loader, val_loader, optimizer,
        --     device, n_epochs=n_epochs, eval_freq=5, eval_iter=1, start_context="Every effort moves you",
        --     tokenizer=tokenizer, warmup_steps=warmup_steps, initial_lr=1e-5, min_lr=1e-5)
        local train_losses, val_losses, tokens_seen, lrs = train_model(model, train_loader, val_loader,
            optimizer, device, n_epochs, 5, 1, "Every effort moves you", tokenizer, warmup_steps,
            1e-5, 1e-5)
        assert_close_list(PY_TRAIN_MODEL, lrs, 1e-12, "train_model lrs")
        assert.are.equal(3, #train_losses)
        assert.are.same({ 16, 96, 176 }, tokens_seen)
        for i = 1, #train_losses do
            assert_finite(train_losses[i], "train loss")
            assert_finite(val_losses[i], "val loss")
        end
        local final_train = evaluate_model(model, train_loader, val_loader, device, 5)
        assert(final_train < initial_train,
            ("train loss did not drop: %.4f -> %.4f"):format(initial_train, final_train))
        -- the last lr written is the optimizer's
        assert.are.equal(lrs[#lrs], optimizer.param_groups[1]["lr"])

        -- epochs_tensor = torch.linspace(1, n_epochs, len(train_losses))
        local epochs_tensor = tide.linspace(1, n_epochs, #train_losses)
        assert_close_list({ 1, 2, 3 }, epochs_tensor:tolist(), 1e-6, "epochs_tensor")
    end)
end)
