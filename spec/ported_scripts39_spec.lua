-- ported_scripts39_spec.lua — karpathy/ng-video-lecture (bigram.py, gpt.py), milesial/Pytorch-UNet
-- (unet_parts, unet_model, dice_score, train.py's step, evaluate.py) and bentrevett/pytorch-seq2seq
-- notebooks 1 (LSTM encoder-decoder) and 3 (bidirectional GRU + attention), ported line for line,
-- shrunk to tiny sizes and random data. The Python line stands above each Lua line that differs.
-- Dims, indices and class targets are 1-based. New here: DataLoader({dataset = ds, batch_size =,
-- collate_fn =, shuffle =}) (PyTorch's DataLoader(dataset=ds, ...), every argument by name).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local isinstance = tide.isinstance

---------------------------------------------------------------------------------------------
-- 1. karpathy/ng-video-lecture
---------------------------------------------------------------------------------------------
describe("ng-video-lecture", function()
    local text = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n"
        .. "First Citizen:\nYou are all resolved rather to die than to famish?\n"

    -- chars = sorted(list(set(text)))
    local function sorted_chars(s)
        local seen, chars = {}, {}
        for c in s:gmatch(".") do
            if not seen[c] then seen[c] = true; chars[#chars + 1] = c end
        end
        table.sort(chars)
        return chars
    end

    local function make_data(block_size, batch_size)
        local chars = sorted_chars(text)
        local vocab_size = #chars
        -- stoi = { ch:i for i,ch in enumerate(chars) }  (ids are 1-based)
        local stoi, itos = {}, {}
        for i, ch in ipairs(chars) do stoi[ch] = i; itos[i] = ch end
        -- encode = lambda s: [stoi[c] for c in s]
        local encode = function(s)
            local out = {}
            for c in s:gmatch(".") do out[#out + 1] = stoi[c] end
            return out
        end
        -- decode = lambda l: ''.join([itos[i] for i in l])
        local decode = function(l)
            local out = {}
            for _, i in ipairs(l) do out[#out + 1] = itos[i] end
            return table.concat(out)
        end
        -- data = torch.tensor(encode(text), dtype=torch.long)
        local data = tide.tensor(encode(text), { dtype = tide.long })
        -- n = int(0.9*len(data))
        local n = math.floor(0.9 * #data)
        -- train_data = data[:n]; val_data = data[n:]
        local train_data = data[{ { 1, n } }]
        local val_data = data[{ { n + 1, -1 } }]
        local function get_batch(split)
            local d = split == "train" and train_data or val_data
            -- ix = torch.randint(len(data) - block_size, (batch_size,))
            local ix = tide.randint(#d - block_size, { batch_size })
            -- x = torch.stack([data[i:i+block_size] for i in ix])
            local xs, ys = {}, {}
            for _, i in ipairs(ix:tolist()) do
                xs[#xs + 1] = d[{ { i + 1, i + block_size } }]
                -- y = torch.stack([data[i+1:i+block_size+1] for i in ix])
                ys[#ys + 1] = d[{ { i + 2, i + block_size + 1 } }]
            end
            return tide.stack(xs), tide.stack(ys)
        end
        return vocab_size, encode, decode, get_batch, stoi
    end

    it("bigram.py: BigramLanguageModel, AdamW, estimate_loss, generate", function()
        tide.manual_seed(1337)
        local batch_size, block_size, max_iters, eval_iters, learning_rate = 4, 8, 30, 3, 1e-2
        local device = "cpu"
        local vocab_size, encode, decode, get_batch = make_data(block_size, batch_size)
        assert.are.equal("Speak", decode(encode("Speak")))

        local BigramLanguageModel = nn.Module:extend("BigramLanguageModel")
        function BigramLanguageModel:init(vs)
            self.token_embedding_table = nn.Embedding(vs, vs)
        end

        function BigramLanguageModel:forward(idx, targets)
            local logits = self.token_embedding_table(idx)
            local loss
            if targets == nil then
                loss = nil
            else
                -- B, T, C = logits.shape
                local B, T, C = unpack(logits.shape)
                logits = logits:view(B * T, C)
                targets = targets:view(B * T)
                loss = F.cross_entropy(logits, targets)
            end
            return logits, loss
        end

        function BigramLanguageModel:generate(idx, max_new_tokens)
            for _ = 1, max_new_tokens do
                local logits = self(idx)
                -- logits = logits[:, -1, :]
                logits = logits[{ {}, -1, {} }]
                local probs = F.softmax(logits, { dim = -1 })
                local idx_next = tide.multinomial(probs, { num_samples = 1 })
                idx = tide.cat({ idx, idx_next }, { dim = 2 })
            end
            return idx
        end

        local model = BigramLanguageModel(vocab_size)
        local m = model:to(device)

        -- @torch.no_grad() def estimate_loss():
        local estimate_loss = tide.no_grad()(function()
            local out = {}
            model:eval()
            for _, split in ipairs({ "train", "val" }) do
                local losses = tide.zeros(eval_iters)
                for k = 1, eval_iters do
                    local X, Y = get_batch(split)
                    local _, loss = model(X, Y)
                    losses[k] = loss:item()
                end
                out[split] = losses:mean()
            end
            model:train()
            return out
        end)

        local optimizer = tide.optim.AdamW(model:parameters(), { lr = learning_rate })
        local first = estimate_loss()
        assert.is_true(model.training)
        assert.is_false(first.train.requires_grad)
        for _ = 0, max_iters - 1 do
            local xb, yb = get_batch("train")
            local _, loss = model(xb, yb)
            optimizer:zero_grad({ set_to_none = true })
            loss:backward()
            optimizer:step()
        end
        local last = estimate_loss()
        assert.is_true(last.train:item() < first.train:item())
        -- context = torch.zeros((1, 1), dtype=torch.long, device=device)  (id 1 is '\n', Python's 0)
        local context = tide.ones({ 1, 1 }, { dtype = tide.long, device = device })
        -- print(decode(m.generate(context, max_new_tokens=500)[0].tolist()))
        local s = decode(m:generate(context, 20)[1]:tolist())
        assert.are.equal(21, #s)
    end)

    it("gpt.py: Head, MultiHeadAttention, FeedFoward, Block, GPTLanguageModel with _init_weights", function()
        tide.manual_seed(1337)
        local batch_size, block_size, max_iters, learning_rate = 4, 8, 12, 3e-3
        local device = "cpu"
        local eval_iters = 2
        local n_embd, n_head, n_layer, dropout = 16, 2, 2, 0.2
        local vocab_size, _, decode, get_batch = make_data(block_size, batch_size)

        local Head = nn.Module:extend("Head")
        function Head:init(head_size)
            self.key = nn.Linear(n_embd, head_size, { bias = false })
            self.query = nn.Linear(n_embd, head_size, { bias = false })
            self.value = nn.Linear(n_embd, head_size, { bias = false })
            self:register_buffer("tril", tide.tril(tide.ones(block_size, block_size)))
            self.dropout = nn.Dropout(dropout)
        end

        function Head:forward(x)
            -- B,T,C = x.shape
            local _, T, _ = unpack(x.shape)
            local k = self.key(x)
            local q = self.query(x)
            -- wei = q @ k.transpose(-2,-1) * k.shape[-1]**-0.5
            local wei = q:matmul(k:transpose(-2, -1)) * k.shape[-1] ^ -0.5
            -- wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))
            wei = wei:masked_fill(self.tril[{ { 1, T }, { 1, T } }]:eq(0), -math.huge)
            wei = F.softmax(wei, { dim = -1 })
            wei = self.dropout(wei)
            local v = self.value(x)
            local out = wei:matmul(v)
            return out
        end

        local MultiHeadAttention = nn.Module:extend("MultiHeadAttention")
        function MultiHeadAttention:init(num_heads, head_size)
            -- self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
            local heads = {}
            for _ = 1, num_heads do heads[#heads + 1] = Head(head_size) end
            self.heads = nn.ModuleList(heads)
            self.proj = nn.Linear(head_size * num_heads, n_embd)
            self.dropout = nn.Dropout(dropout)
        end

        function MultiHeadAttention:forward(x)
            -- out = torch.cat([h(x) for h in self.heads], dim=-1)
            local outs = {}
            for _, h in ipairs(self.heads) do outs[#outs + 1] = h(x) end
            local out = tide.cat(outs, { dim = -1 })
            out = self.dropout(self.proj(out))
            return out
        end

        local FeedFoward = nn.Module:extend("FeedFoward")
        function FeedFoward:init(n_embd_)
            self.net = nn.Sequential(
                nn.Linear(n_embd_, 4 * n_embd_),
                nn.ReLU(),
                nn.Linear(4 * n_embd_, n_embd_),
                nn.Dropout(dropout)
            )
        end

        function FeedFoward:forward(x) return self.net(x) end

        local Block = nn.Module:extend("Block")
        nn.signature(Block, "n_embd, n_head")
        function Block:init(n_embd_, n_head_)
            -- head_size = n_embd // n_head
            local head_size = math.floor(n_embd_ / n_head_)
            self.sa = MultiHeadAttention(n_head_, head_size)
            self.ffwd = FeedFoward(n_embd_)
            self.ln1 = nn.LayerNorm(n_embd_)
            self.ln2 = nn.LayerNorm(n_embd_)
        end

        function Block:forward(x)
            x = x + self.sa(self.ln1(x))
            x = x + self.ffwd(self.ln2(x))
            return x
        end

        local GPTLanguageModel = nn.Module:extend("GPTLanguageModel")
        function GPTLanguageModel:init()
            self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
            self.position_embedding_table = nn.Embedding(block_size, n_embd)
            -- self.blocks = nn.Sequential(*[Block(n_embd, n_head=n_head) for _ in range(n_layer)])
            local blocks = {}
            for _ = 1, n_layer do blocks[#blocks + 1] = Block(n_embd, { n_head = n_head }) end
            self.blocks = nn.Sequential(unpack(blocks))
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab_size)
            -- self.apply(self._init_weights)  (no bound methods in Lua)
            self:apply(function(module) self:_init_weights(module) end)
        end

        function GPTLanguageModel:_init_weights(module)
            if isinstance(module, nn.Linear) then
                tide.nn.init.normal_(module.weight, { mean = 0.0, std = 0.02 })
                -- if module.bias is not None:
                if module.bias ~= nil then
                    tide.nn.init.zeros_(module.bias)
                end
            elseif isinstance(module, nn.Embedding) then
                tide.nn.init.normal_(module.weight, { mean = 0.0, std = 0.02 })
            end
        end

        function GPTLanguageModel:forward(idx, targets)
            local _, T = unpack(idx.shape)
            local tok_emb = self.token_embedding_table(idx)
            -- pos_emb = self.position_embedding_table(torch.arange(T, device=device))  (ids 1..T)
            local pos_emb = self.position_embedding_table(tide.arange(1, T + 1, { device = device }))
            local x = tok_emb + pos_emb
            x = self.blocks(x)
            x = self.ln_f(x)
            local logits = self.lm_head(x)
            local loss
            if targets == nil then
                loss = nil
            else
                local B, T2, C = unpack(logits.shape)
                logits = logits:view(B * T2, C)
                targets = targets:view(B * T2)
                loss = F.cross_entropy(logits, targets)
            end
            return logits, loss
        end

        function GPTLanguageModel:generate(idx, max_new_tokens)
            for _ = 1, max_new_tokens do
                -- idx_cond = idx[:, -block_size:]
                local idx_cond = idx[{ {}, { -block_size, -1 } }]
                local logits = self(idx_cond)
                logits = logits[{ {}, -1, {} }]
                local probs = F.softmax(logits, { dim = -1 })
                local idx_next = tide.multinomial(probs, { num_samples = 1 })
                -- idx = torch.cat((idx, idx_next), dim=1)
                idx = tide.cat({ idx, idx_next }, { dim = 2 })
            end
            return idx
        end

        local model = GPTLanguageModel()
        local m = model:to(device)
        -- the _init_weights ran: every Linear bias is zero, weights have std about 0.02
        assert.are.equal(0, model.lm_head.bias:abs():sum():item())
        assert.is_true(model.token_embedding_table.weight:std():item() < 0.05)
        -- print(sum(p.numel() for p in m.parameters())/1e6, 'M parameters')
        local nparams = 0
        for _, p in ipairs(m:parameters()) do nparams = nparams + p:numel() end
        assert.is_true(nparams > 0)

        local estimate_loss = tide.no_grad()(function()
            local out = {}
            model:eval()
            for _, split in ipairs({ "train", "val" }) do
                local losses = tide.zeros(eval_iters)
                for k = 1, eval_iters do
                    local X, Y = get_batch(split)
                    local _, loss = model(X, Y)
                    losses[k] = loss:item()
                end
                out[split] = losses:mean()
            end
            model:train()
            return out
        end)

        local optimizer = tide.optim.AdamW(model:parameters(), { lr = learning_rate })
        local xb0, yb0 = get_batch("train")
        local _, loss0 = model(xb0, yb0)
        local losses = estimate_loss()
        assert_finite(losses.train)
        for _ = 0, max_iters - 1 do
            local xb, yb = get_batch("train")
            local _, loss = model(xb, yb)
            optimizer:zero_grad({ set_to_none = true })
            loss:backward()
            optimizer:step()
        end
        model:eval()
        local _, loss1 = tide.no_grad(function() return model(xb0, yb0) end)
        model:train()
        assert.is_true(loss1:item() < loss0:item())
        local context = tide.ones({ 1, 1 }, { dtype = tide.long, device = device })
        -- generate past block_size: idx[:, -block_size:] crops
        local out = m:generate(context, 12)
        assert.are.same({ 1, 13 }, { out:size(1), out:size(2) })
        assert.are.equal(13, #decode(out[1]:tolist()))
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. milesial/Pytorch-UNet (widths divided by 16: 64 -> 4, ..., 1024 -> 64)
---------------------------------------------------------------------------------------------
describe("Pytorch-UNet", function()
    local W = 16 -- the width divisor (not in the script)

    -- class DoubleConv(nn.Module): def __init__(self, in_channels, out_channels, mid_channels=None)
    local DoubleConv = nn.Module:extend("DoubleConv")
    nn.signature(DoubleConv, "in_channels, out_channels, mid_channels=None")
    function DoubleConv:init(in_channels, out_channels, mid_channels)
        -- if not mid_channels: mid_channels = out_channels
        if not mid_channels then mid_channels = out_channels end
        self.double_conv = nn.Sequential(
            nn.Conv2d(in_channels, mid_channels, { kernel_size = 3, padding = 1, bias = false }),
            nn.BatchNorm2d(mid_channels),
            nn.ReLU({ inplace = true }),
            nn.Conv2d(mid_channels, out_channels, { kernel_size = 3, padding = 1, bias = false }),
            nn.BatchNorm2d(out_channels),
            nn.ReLU({ inplace = true })
        )
    end

    function DoubleConv:forward(x) return self.double_conv(x) end

    local Down = nn.Module:extend("Down")
    function Down:init(in_channels, out_channels)
        self.maxpool_conv = nn.Sequential(
            nn.MaxPool2d(2),
            DoubleConv(in_channels, out_channels)
        )
    end

    function Down:forward(x) return self.maxpool_conv(x) end

    local Up = nn.Module:extend("Up")
    nn.signature(Up, "in_channels, out_channels, bilinear=True")
    function Up:init(in_channels, out_channels, bilinear)
        if bilinear then
            self.up = nn.Upsample({ scale_factor = 2, mode = "bilinear", align_corners = true })
            -- self.conv = DoubleConv(in_channels, out_channels, in_channels // 2)
            self.conv = DoubleConv(in_channels, out_channels, math.floor(in_channels / 2))
        else
            self.up = nn.ConvTranspose2d(in_channels, math.floor(in_channels / 2), { kernel_size = 2, stride = 2 })
            self.conv = DoubleConv(in_channels, out_channels)
        end
    end

    function Up:forward(x1, x2)
        x1 = self.up(x1)
        -- diffY = x2.size()[2] - x1.size()[2]   (1-based: [3])
        local diffY = x2:size()[3] - x1:size()[3]
        local diffX = x2:size()[4] - x1:size()[4]
        -- x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2])
        x1 = F.pad(x1, { math.floor(diffX / 2), diffX - math.floor(diffX / 2),
            math.floor(diffY / 2), diffY - math.floor(diffY / 2) })
        -- x = torch.cat([x2, x1], dim=1)
        local x = tide.cat({ x2, x1 }, { dim = 2 })
        return self.conv(x)
    end

    local OutConv = nn.Module:extend("OutConv")
    function OutConv:init(in_channels, out_channels)
        self.conv = nn.Conv2d(in_channels, out_channels, { kernel_size = 1 })
    end

    function OutConv:forward(x) return self.conv(x) end

    local UNet = nn.Module:extend("UNet")
    nn.signature(UNet, "n_channels, n_classes, bilinear=False")
    function UNet:init(n_channels, n_classes, bilinear)
        self.n_channels = n_channels
        self.n_classes = n_classes
        self.bilinear = bilinear
        self.inc = DoubleConv(n_channels, 64 / W)
        self.down1 = Down(64 / W, 128 / W)
        self.down2 = Down(128 / W, 256 / W)
        self.down3 = Down(256 / W, 512 / W)
        -- factor = 2 if bilinear else 1
        local factor = bilinear and 2 or 1
        -- self.down4 = (Down(512, 1024 // factor))
        self.down4 = Down(512 / W, math.floor(1024 / W / factor))
        self.up1 = Up(1024 / W, math.floor(512 / W / factor), bilinear)
        self.up2 = Up(512 / W, math.floor(256 / W / factor), bilinear)
        self.up3 = Up(256 / W, math.floor(128 / W / factor), bilinear)
        self.up4 = Up(128 / W, 64 / W, bilinear)
        self.outc = OutConv(64 / W, n_classes)
    end

    function UNet:forward(x)
        local x1 = self.inc(x)
        local x2 = self.down1(x1)
        local x3 = self.down2(x2)
        local x4 = self.down3(x3)
        local x5 = self.down4(x4)
        x = self.up1(x5, x4)
        x = self.up2(x, x3)
        x = self.up3(x, x2)
        x = self.up4(x, x1)
        local logits = self.outc(x)
        return logits
    end

    -- def use_checkpointing(self): self.inc = torch.utils.checkpoint(self.inc) ...
    -- (the script's line raises in PyTorch: torch.utils.checkpoint is a module; what it means is
    -- each part's forward run through torch.utils.checkpoint.checkpoint, which this writes)
    function UNet:use_checkpointing()
        for _, name in ipairs({ "inc", "down1", "down2", "down3", "down4", "up1", "up2", "up3", "up4", "outc" }) do
            local part = self[name]
            local forward = part.forward
            part.forward = function(p, ...)
                return tide.utils.checkpoint(function(...) return forward(p, ...) end, ...)
            end
        end
    end

    -- utils/dice_score.py
    -- def dice_coeff(input, target, reduce_batch_first=False, epsilon=1e-6):
    local function dice_coeff(input, target, reduce_batch_first, epsilon)
        reduce_batch_first = reduce_batch_first or false
        epsilon = epsilon or 1e-6
        -- assert input.size() == target.size()
        assert(input:size() == target:size())
        assert(input:dim() == 3 or not reduce_batch_first)
        -- sum_dim = (-1, -2) if input.dim() == 2 or not reduce_batch_first else (-1, -2, -3)
        local sum_dim = (input:dim() == 2 or not reduce_batch_first) and { -1, -2 } or { -1, -2, -3 }
        -- inter = 2 * (input * target).sum(dim=sum_dim)
        local inter = 2 * (input * target):sum({ dim = sum_dim })
        local sets_sum = input:sum({ dim = sum_dim }) + target:sum({ dim = sum_dim })
        -- sets_sum = torch.where(sets_sum == 0, inter, sets_sum)
        sets_sum = tide.where(sets_sum:eq(0), inter, sets_sum)
        local dice = (inter + epsilon) / (sets_sum + epsilon)
        return dice:mean()
    end

    local function multiclass_dice_coeff(input, target, reduce_batch_first, epsilon)
        -- return dice_coeff(input.flatten(0, 1), target.flatten(0, 1), reduce_batch_first, epsilon)
        return dice_coeff(input:flatten(1, 2), target:flatten(1, 2), reduce_batch_first, epsilon)
    end

    -- def dice_loss(input, target, multiclass=False):
    local function dice_loss(input, target, multiclass)
        local fn = multiclass and multiclass_dice_coeff or dice_coeff
        -- return 1 - fn(input, target, reduce_batch_first=True)
        return 1 - fn(input, target, true)
    end

    -- evaluate.py: @torch.inference_mode() def evaluate(net, dataloader, device, amp):
    local evaluate = tide.inference_mode()(function(net, dataloader, device, amp)
        net:eval()
        -- num_val_batches = len(dataloader)  (`#dataloader` on Lua 5.3+; Lua 5.1 ignores __len)
        local num_val_batches = dataloader:len()
        local dice_score = 0
        -- with torch.autocast(device.type if device.type != 'mps' else 'cpu', enabled=amp):
        tide.autocast(device.type ~= "mps" and device.type or "cpu", { enabled = amp }, function()
            for batch in dataloader:iter() do
                local image, mask_true = batch["image"], batch["mask"]
                -- image = image.to(device=device, dtype=torch.float32, memory_format=torch.channels_last)
                image = image:to({ device = device, dtype = tide.float32, memory_format = tide.channels_last })
                mask_true = mask_true:to({ device = device, dtype = tide.long })
                local mask_pred = net(image)
                if net.n_classes == 1 then
                    -- assert mask_true.min() >= 0 and mask_true.max() <= 1
                    assert(mask_true:min():item() >= 0 and mask_true:max():item() <= 1)
                    -- mask_pred = (F.sigmoid(mask_pred) > 0.5).float()
                    mask_pred = F.sigmoid(mask_pred):gt(0.5):float()
                    -- dice_score += dice_coeff(mask_pred, mask_true, reduce_batch_first=False)
                    --   (the script's mask_pred is [N, 1, H, W] against [N, H, W]: squeeze(1) here)
                    dice_score = dice_score + dice_coeff(mask_pred:squeeze(2), mask_true, false)
                else
                    -- mask_true = F.one_hot(mask_true, net.n_classes).permute(0, 3, 1, 2).float()
                    --   (class ids are 1-based: one_hot of id k sets channel k)
                    mask_true = F.one_hot(mask_true, net.n_classes):permute(1, 4, 2, 3):float()
                    mask_pred = F.one_hot(mask_pred:argmax({ dim = 2 }), net.n_classes):permute(1, 4, 2, 3):float()
                    -- multiclass_dice_coeff(mask_pred[:, 1:], mask_true[:, 1:], reduce_batch_first=False)
                    dice_score = dice_score + multiclass_dice_coeff(mask_pred[{ {}, { 2, -1 } }],
                        mask_true[{ {}, { 2, -1 } }], false)
                end
            end
        end)
        net:train()
        -- return dice_score / max(num_val_batches, 1)
        return dice_score / math.max(num_val_batches, 1)
    end)

    local function run_train(n_classes, bilinear, checkpointing)
        tide.manual_seed(0)
        local device = tide.device("cpu")
        local amp = true
        local learning_rate, weight_decay, momentum, gradient_clipping = 1e-3, 1e-8, 0.999, 1.0
        local model = UNet({ n_channels = 3, n_classes = n_classes, bilinear = bilinear })
        if checkpointing then model:use_checkpointing() end
        -- model = model.to(memory_format=torch.channels_last)
        model = model:to({ memory_format = tide.channels_last })
        -- the dataset: batches of {'image': [N, 3, 32, 32], 'mask': [N, 32, 32]} (class ids 1-based)
        local Ds = tide.utils.data.Dataset:extend("BasicDataset")
        function Ds:init(n)
            self.images = tide.rand(n, 3, 32, 32)
            local hi = n_classes == 1 and 1 or n_classes + 1
            local lo = n_classes == 1 and 0 or 1
            self.masks = tide.randint(lo, hi + (n_classes == 1 and 1 or 0), { n, 32, 32 })
        end
        function Ds:__len__() return self.images:size(1) end
        function Ds:__getitem__(i) return { image = self.images[i], mask = self.masks[i] } end
        local train_loader = tide.utils.data.DataLoader(Ds(4), { batch_size = 2, shuffle = true })
        local val_loader = tide.utils.data.DataLoader(Ds(2), { batch_size = 2, shuffle = false })

        -- optimizer = optim.RMSprop(model.parameters(), lr=learning_rate, weight_decay=weight_decay, momentum=momentum, foreach=True)
        local optimizer = optim.RMSprop(model:parameters(),
            { lr = learning_rate, weight_decay = weight_decay, momentum = momentum, foreach = true })
        -- scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, 'max', patience=5)
        local scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, "max", { patience = 5 })
        -- grad_scaler = torch.cuda.amp.GradScaler(enabled=amp)
        local grad_scaler = tide.cuda.amp.GradScaler({ enabled = amp })
        -- criterion = nn.CrossEntropyLoss() if model.n_classes > 1 else nn.BCEWithLogitsLoss()
        local criterion = model.n_classes > 1 and nn.CrossEntropyLoss() or nn.BCEWithLogitsLoss()
        local losses = {}
        for _ = 1, 2 do
            model:train()
            for batch in train_loader:iter() do
                local images, true_masks = batch["image"], batch["mask"]
                -- assert images.shape[1] == model.n_channels
                assert(images.shape[2] == model.n_channels)
                images = images:to({ device = device, dtype = tide.float32, memory_format = tide.channels_last })
                true_masks = true_masks:to({ device = device, dtype = tide.long })
                local masks_pred, loss
                -- with torch.autocast(device.type if device.type != 'mps' else 'cpu', enabled=amp):
                tide.autocast(device.type ~= "mps" and device.type or "cpu", { enabled = amp }, function()
                    masks_pred = model(images)
                    if model.n_classes == 1 then
                        loss = criterion(masks_pred:squeeze(2), true_masks:float())
                        -- loss += dice_loss(F.sigmoid(masks_pred.squeeze(1)), true_masks.float(), multiclass=False)
                        loss = loss + dice_loss(F.sigmoid(masks_pred:squeeze(2)), true_masks:float(), false)
                    else
                        loss = criterion(masks_pred, true_masks)
                        loss = loss + dice_loss(
                            F.softmax(masks_pred, { dim = 2 }):float(),
                            F.one_hot(true_masks, model.n_classes):permute(1, 4, 2, 3):float(),
                            true
                        )
                    end
                end)
                optimizer:zero_grad({ set_to_none = true })
                grad_scaler:scale(loss):backward()
                grad_scaler:unscale_(optimizer)
                tide.nn.utils.clip_grad_norm_(model:parameters(), gradient_clipping)
                grad_scaler:step(optimizer)
                grad_scaler:update()
                losses[#losses + 1] = loss:item()
                -- if not (torch.isinf(value) | torch.isnan(value)).any():
                for _, value in ipairs(model:parameters()) do
                    --   (no `|` on Lua 5.1: tide.bitwise_or is Python's | on bool tensors)
                    assert.is_false(tide.bitwise_or(tide.isinf(value), tide.isnan(value)):any():item())
                end
            end
            local val_score = evaluate(model, val_loader, device, amp)
            scheduler:step(val_score)
            assert_finite(val_score)
            assert.is_true(val_score:item() >= 0 and val_score:item() <= 1)
            -- 'learning rate': optimizer.param_groups[0]['lr']
            assert.are.equal(learning_rate, optimizer.param_groups[1]["lr"])
        end
        for _, l in ipairs(losses) do assert.is_true(l == l and l < math.huge) end
        return model, losses, dice_coeff, dice_loss
    end

    it("UNet (ConvTranspose2d), n_classes 2: RMSprop foreach, ReduceLROnPlateau('max'), GradScaler, dice", function()
        local _, losses = run_train(2, false, false)
        assert.are.equal(4, #losses)
    end)

    it("UNet (bilinear Upsample + F.pad to the skip), n_classes 1: the sigmoid branch, use_checkpointing", function()
        local model = run_train(1, true, true)
        -- a 36x36 input: 36 -> 18 -> 9 -> 4 -> 2, up to 4, 8 (padded to 9), 18, 36
        model:eval()
        local y = tide.no_grad(function() return model(tide.rand(1, 3, 36, 36)) end)
        assert.are.same({ 1, 1, 36, 36 }, { y:size(1), y:size(2), y:size(3), y:size(4) })
    end)

    it("dice_coeff / dice_loss values against PyTorch", function()
        -- input = torch.arange(8.).view(2, 2, 2) / 8
        local input = tide.arange(8.):view(2, 2, 2) / 8
        -- target = (torch.arange(8).view(2, 2, 2) % 3 == 0).float()
        local target = (tide.arange(8):view(2, 2, 2) % 3):eq(0):float()
        assert.is_true(input:size() == target:size())
        assert.near(0.33636385202407837, dice_coeff(input, target):item(), 1e-6)
        assert.near(0.34615394473075867, dice_coeff(input, target, true):item(), 1e-6)
        assert.near(0.653846025466919, dice_loss(input, target):item(), 1e-6)
        local i4 = tide.arange(16.):view(2, 2, 2, 2) / 16
        local t4 = (tide.arange(16):view(2, 2, 2, 2) % 3):eq(0):float()
        assert.near(0.35873135924339294, multiclass_dice_coeff(i4, t4):item(), 1e-6)
        assert.near(0.5833332538604736, dice_loss(i4, t4, true):item(), 1e-6)
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. bentrevett/pytorch-seq2seq, notebooks 1 and 3 (tiny random token ids for Multi30k)
---------------------------------------------------------------------------------------------
describe("pytorch-seq2seq", function()
    local pad_index, sos_index, eos_index = 1, 2, 3 -- the vocabularies' <pad>, <sos>, <eos> (1-based)

    -- a dataset of {"en_ids": LongTensor, "de_ids": LongTensor} examples of varied lengths
    local function make_dataset(n, vocab)
        local ds = {}
        for i = 1, n do
            local len_de, len_en = 3 + (i % 3), 2 + (i % 4)
            local de = tide.cat({ tide.tensor({ sos_index }), tide.randint(4, vocab + 1, { len_de }), tide.tensor({ eos_index }) })
            local en = tide.cat({ tide.tensor({ sos_index }), tide.randint(4, vocab + 1, { len_en }), tide.tensor({ eos_index }) })
            ds[i] = { en_ids = en, de_ids = de }
        end
        return ds
    end

    local function get_collate_fn(pad_index_)
        local function collate_fn(batch)
            -- batch_en_ids = [example["en_ids"] for example in batch]
            local batch_en_ids, batch_de_ids = {}, {}
            for _, example in ipairs(batch) do
                batch_en_ids[#batch_en_ids + 1] = example["en_ids"]
                batch_de_ids[#batch_de_ids + 1] = example["de_ids"]
            end
            -- batch_en_ids = nn.utils.rnn.pad_sequence(batch_en_ids, padding_value=pad_index)
            batch_en_ids = nn.utils.rnn.pad_sequence(batch_en_ids, { padding_value = pad_index_ })
            batch_de_ids = nn.utils.rnn.pad_sequence(batch_de_ids, { padding_value = pad_index_ })
            local b = {
                en_ids = batch_en_ids,
                de_ids = batch_de_ids,
            }
            return b
        end
        return collate_fn
    end

    -- def get_data_loader(dataset, batch_size, pad_index, shuffle=False):
    local function get_data_loader(dataset, batch_size, pad_index_, shuffle)
        local collate_fn = get_collate_fn(pad_index_)
        -- torch.utils.data.DataLoader(dataset=dataset, batch_size=batch_size, collate_fn=collate_fn, shuffle=shuffle)
        local data_loader = tide.utils.data.DataLoader({
            dataset = dataset,
            batch_size = batch_size,
            collate_fn = collate_fn,
            shuffle = shuffle or false,
        })
        return data_loader
    end

    local function count_parameters(model)
        -- return sum(p.numel() for p in model.parameters() if p.requires_grad)
        local n = 0
        for _, p in ipairs(model:parameters()) do
            if p.requires_grad then n = n + p:numel() end
        end
        return n
    end

    local function train_fn(model, data_loader, optimizer, criterion, clip, teacher_forcing_ratio, device)
        model:train()
        local epoch_loss = 0
        -- for i, batch in enumerate(data_loader):
        for _, batch in data_loader:enumerate() do
            local src = batch["de_ids"]:to(device)
            local trg = batch["en_ids"]:to(device)
            optimizer:zero_grad()
            local output = model(src, trg, teacher_forcing_ratio)
            local output_dim = output.shape[-1]
            -- output = output[1:].view(-1, output_dim)
            output = output[{ { 2, -1 } }]:view(-1, output_dim)
            trg = trg[{ { 2, -1 } }]:view(-1)
            local loss = criterion(output, trg)
            loss:backward()
            tide.nn.utils.clip_grad_norm_(model:parameters(), clip)
            optimizer:step()
            epoch_loss = epoch_loss + loss:item()
        end
        -- return epoch_loss / len(data_loader)  (`#data_loader` on Lua 5.3+; Lua 5.1 ignores __len)
        return epoch_loss / data_loader:len()
    end

    local function evaluate_fn(model, data_loader, criterion, device)
        model:eval()
        local epoch_loss = 0
        tide.no_grad(function()
            for _, batch in data_loader:enumerate() do
                local src = batch["de_ids"]:to(device)
                local trg = batch["en_ids"]:to(device)
                local output = model(src, trg, 0)
                local output_dim = output.shape[-1]
                output = output[{ { 2, -1 } }]:view(-1, output_dim)
                trg = trg[{ { 2, -1 } }]:view(-1)
                local loss = criterion(output, trg)
                epoch_loss = epoch_loss + loss:item()
            end
        end)
        return epoch_loss / data_loader:len()
    end

    it("DataLoader(dataset=..., batch_size=..., collate_fn=..., shuffle=...): every argument by name", function()
        local ds = make_dataset(5, 11)
        local loader = get_data_loader(ds, 2, pad_index)
        assert.are.equal(3, loader:len())
        local batches = {}
        for batch in loader:iter() do batches[#batches + 1] = batch end
        -- pad_sequence's default is time-first: [max length, batch size]
        assert.are.equal(2, batches[1]["en_ids"]:size(2))
        assert.are.equal(1, batches[3]["de_ids"]:size(2))
        assert.are.equal(ds[1]["de_ids"][1]:item(), batches[1]["de_ids"][{ 1, 1 }]:item())
        -- bad input names the value
        assert.has_error(function() tide.utils.data.DataLoader({ dataset = 5, batch_size = 2 }) end,
            "tide: DataLoader: expected a dataset (tide.data.Dataset, TensorDataset, IterableDataset or a plain Lua list of samples), got number")
        local ok, err = pcall(tide.utils.data.DataLoader, { dataset = ds, batch_sise = 2 })
        assert.is_false(ok)
        assert.truthy(tostring(err):find("batch_sise", 1, true))
    end)

    it("1 - Sequence to Sequence Learning: LSTM Encoder/Decoder, teacher forcing, uniform_ init", function()
        local seed = 1234
        math.randomseed(seed)
        tide.manual_seed(seed)
        local device = tide.device("cpu")
        local input_dim, output_dim = 12, 11
        local train_data_loader = get_data_loader(make_dataset(8, 11), 4, pad_index, true)
        local valid_data_loader = get_data_loader(make_dataset(4, 11), 4, pad_index)

        local Encoder = nn.Module:extend("Encoder")
        function Encoder:init(input_dim_, embedding_dim, hidden_dim, n_layers, dropout)
            self.hidden_dim = hidden_dim
            self.n_layers = n_layers
            self.embedding = nn.Embedding(input_dim_, embedding_dim)
            self.rnn = nn.LSTM(embedding_dim, hidden_dim, n_layers, { dropout = dropout })
            self.dropout = nn.Dropout(dropout)
        end

        function Encoder:forward(src)
            local embedded = self.dropout(self.embedding(src))
            -- outputs, (hidden, cell) = self.rnn(embedded)
            local _, hc = self.rnn(embedded)
            local hidden, cell = unpack(hc)
            return hidden, cell
        end

        local Decoder = nn.Module:extend("Decoder")
        function Decoder:init(output_dim_, embedding_dim, hidden_dim, n_layers, dropout)
            self.output_dim = output_dim_
            self.hidden_dim = hidden_dim
            self.n_layers = n_layers
            self.embedding = nn.Embedding(output_dim_, embedding_dim)
            self.rnn = nn.LSTM(embedding_dim, hidden_dim, n_layers, { dropout = dropout })
            self.fc_out = nn.Linear(hidden_dim, output_dim_)
            self.dropout = nn.Dropout(dropout)
        end

        function Decoder:forward(input, hidden, cell)
            -- input = input.unsqueeze(0)
            input = input:unsqueeze(1)
            local embedded = self.dropout(self.embedding(input))
            -- output, (hidden, cell) = self.rnn(embedded, (hidden, cell))
            local output, hc = self.rnn(embedded, { hidden, cell })
            hidden, cell = unpack(hc)
            -- prediction = self.fc_out(output.squeeze(0))
            local prediction = self.fc_out(output:squeeze(1))
            return prediction, hidden, cell
        end

        local Seq2Seq = nn.Module:extend("Seq2Seq")
        function Seq2Seq:init(encoder, decoder, device_)
            self.encoder = encoder
            self.decoder = decoder
            self.device = device_
            assert(encoder.hidden_dim == decoder.hidden_dim, "Hidden dimensions of encoder and decoder must be equal!")
            assert(encoder.n_layers == decoder.n_layers, "Encoder and decoder must have equal number of layers!")
        end

        function Seq2Seq:forward(src, trg, teacher_forcing_ratio)
            local batch_size = trg.shape[2]
            local trg_length = trg.shape[1]
            local trg_vocab_size = self.decoder.output_dim
            local outputs = tide.zeros(trg_length, batch_size, trg_vocab_size):to(self.device)
            local hidden, cell = self.encoder(src)
            -- input = trg[0, :]
            local input = trg[{ 1, {} }]
            -- for t in range(1, trg_length):
            for t = 2, trg_length do
                local output
                output, hidden, cell = self.decoder(input, hidden, cell)
                outputs[t] = output
                -- teacher_force = random.random() < teacher_forcing_ratio
                local teacher_force = math.random() < teacher_forcing_ratio
                local top1 = output:argmax(2)
                -- input = trg[t] if teacher_force else top1
                if teacher_force then input = trg[t] else input = top1 end
            end
            return outputs
        end

        local encoder_embedding_dim, decoder_embedding_dim, hidden_dim, n_layers = 8, 8, 16, 2
        local encoder_dropout, decoder_dropout = 0.5, 0.5
        local encoder = Encoder(input_dim, encoder_embedding_dim, hidden_dim, n_layers, encoder_dropout)
        local decoder = Decoder(output_dim, decoder_embedding_dim, hidden_dim, n_layers, decoder_dropout)
        local model = Seq2Seq(encoder, decoder, device):to(device)

        local function init_weights(m)
            -- for name, param in m.named_parameters():
            for _, param in m:named_parameters() do
                nn.init.uniform_(param.data, -0.08, 0.08)
            end
        end
        model:apply(init_weights)
        for _, p in ipairs(model:parameters()) do assert.is_true(p:abs():max():item() <= 0.08) end

        -- 8*12 + LSTM(8,16,2): 4*16*(8+16+2) + 4*16*(16+16+2), twice; + Linear(16, 11)
        local lstm = 4 * 16 * (8 + 16 + 2) + 4 * 16 * (16 + 16 + 2)
        assert.are.equal(12 * 8 + lstm + 11 * 8 + lstm + 16 * 11 + 11, count_parameters(model))

        local optimizer = optim.Adam(model:parameters())
        local criterion = nn.CrossEntropyLoss({ ignore_index = pad_index })
        local n_epochs, clip, teacher_forcing_ratio = 6, 1.0, 0.5
        local best_valid_loss = math.huge
        -- (the data is random: the check is that the train set's loss falls)
        local first_train = evaluate_fn(model, train_data_loader, criterion, device)
        for _ = 1, n_epochs do
            local train_loss = train_fn(model, train_data_loader, optimizer, criterion, clip, teacher_forcing_ratio, device)
            local valid_loss = evaluate_fn(model, valid_data_loader, criterion, device)
            assert.is_true(train_loss == train_loss and valid_loss == valid_loss)
            if valid_loss < best_valid_loss then best_valid_loss = valid_loss end
        end
        assert.is_true(best_valid_loss < math.huge)
        assert.is_true(evaluate_fn(model, train_data_loader, criterion, device) < first_train)

        -- translate_sentence: tensor = torch.LongTensor(ids).unsqueeze(-1).to(device)
        model:eval()
        local inputs = tide.no_grad(function()
            local tensor = tide.LongTensor({ sos_index, 5, 6, 7, eos_index }):unsqueeze(-1):to(device)
            local hidden, cell = model.encoder(tensor)
            local inputs = { sos_index }
            for _ = 1, 25 do
                -- inputs_tensor = torch.LongTensor([inputs[-1]]).to(device)
                local inputs_tensor = tide.LongTensor({ inputs[#inputs] }):to(device)
                local output
                output, hidden, cell = model.decoder(inputs_tensor, hidden, cell)
                local predicted_token = output:argmax(-1):item()
                inputs[#inputs + 1] = predicted_token
                if predicted_token == eos_index then break end
            end
            return inputs
        end)
        assert.is_true(#inputs >= 2 and #inputs <= 26)
    end)

    it("3 - Jointly Learning to Align and Translate: bidirectional GRU Encoder, Attention, Decoder", function()
        math.randomseed(1234)
        tide.manual_seed(1234)
        local device = tide.device("cpu")
        local input_dim, output_dim = 12, 11
        local train_data_loader = get_data_loader(make_dataset(8, 11), 4, pad_index, true)
        local valid_data_loader = get_data_loader(make_dataset(4, 11), 4, pad_index)

        local Encoder = nn.Module:extend("Encoder")
        function Encoder:init(input_dim_, embedding_dim, encoder_hidden_dim, decoder_hidden_dim, dropout)
            self.embedding = nn.Embedding(input_dim_, embedding_dim)
            self.rnn = nn.GRU(embedding_dim, encoder_hidden_dim, { bidirectional = true })
            self.fc = nn.Linear(encoder_hidden_dim * 2, decoder_hidden_dim)
            self.dropout = nn.Dropout(dropout)
        end

        function Encoder:forward(src)
            local embedded = self.dropout(self.embedding(src))
            local outputs, hidden = self.rnn(embedded)
            -- hidden = torch.tanh(self.fc(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)))
            hidden = tide.tanh(self.fc(tide.cat({ hidden[{ -2, {}, {} }], hidden[{ -1, {}, {} }] }, { dim = 2 })))
            return outputs, hidden
        end

        local Attention = nn.Module:extend("Attention")
        function Attention:init(encoder_hidden_dim, decoder_hidden_dim)
            self.attn_fc = nn.Linear((encoder_hidden_dim * 2) + decoder_hidden_dim, decoder_hidden_dim)
            self.v_fc = nn.Linear(decoder_hidden_dim, 1, { bias = false })
        end

        function Attention:forward(hidden, encoder_outputs)
            local src_length = encoder_outputs.shape[1]
            -- hidden = hidden.unsqueeze(1).repeat(1, src_length, 1)
            --   (`repeat` is a Lua keyword: t["repeat"](t, ...) is x.repeat(...))
            hidden = hidden:unsqueeze(2)
            hidden = hidden["repeat"](hidden, 1, src_length, 1)
            -- encoder_outputs = encoder_outputs.permute(1, 0, 2)
            encoder_outputs = encoder_outputs:permute(2, 1, 3)
            local energy = tide.tanh(self.attn_fc(tide.cat({ hidden, encoder_outputs }, { dim = 3 })))
            -- attention = self.v_fc(energy).squeeze(2)
            local attention = self.v_fc(energy):squeeze(3)
            return tide.softmax(attention, { dim = 2 })
        end

        local Decoder = nn.Module:extend("Decoder")
        function Decoder:init(output_dim_, embedding_dim, encoder_hidden_dim, decoder_hidden_dim, dropout, attention)
            self.output_dim = output_dim_
            self.attention = attention
            self.embedding = nn.Embedding(output_dim_, embedding_dim)
            self.rnn = nn.GRU((encoder_hidden_dim * 2) + embedding_dim, decoder_hidden_dim)
            self.fc_out = nn.Linear((encoder_hidden_dim * 2) + decoder_hidden_dim + embedding_dim, output_dim_)
            self.dropout = nn.Dropout(dropout)
        end

        function Decoder:forward(input, hidden, encoder_outputs)
            input = input:unsqueeze(1)
            local embedded = self.dropout(self.embedding(input))
            local a = self.attention(hidden, encoder_outputs)
            a = a:unsqueeze(2)
            encoder_outputs = encoder_outputs:permute(2, 1, 3)
            local weighted = tide.bmm(a, encoder_outputs)
            weighted = weighted:permute(2, 1, 3)
            local rnn_input = tide.cat({ embedded, weighted }, { dim = 3 })
            local output
            output, hidden = self.rnn(rnn_input, hidden:unsqueeze(1))
            -- assert (output == hidden).all()
            assert(output:eq(hidden):all():item())
            embedded = embedded:squeeze(1)
            output = output:squeeze(1)
            weighted = weighted:squeeze(1)
            local prediction = self.fc_out(tide.cat({ output, weighted, embedded }, { dim = 2 }))
            return prediction, hidden:squeeze(1), a:squeeze(2)
        end

        local Seq2Seq = nn.Module:extend("Seq2Seq")
        function Seq2Seq:init(encoder, decoder, device_)
            self.encoder = encoder
            self.decoder = decoder
            self.device = device_
        end

        function Seq2Seq:forward(src, trg, teacher_forcing_ratio)
            local batch_size = src.shape[2]
            local trg_length = trg.shape[1]
            local trg_vocab_size = self.decoder.output_dim
            local outputs = tide.zeros(trg_length, batch_size, trg_vocab_size):to(self.device)
            local encoder_outputs, hidden = self.encoder(src)
            local input = trg[{ 1, {} }]
            for t = 2, trg_length do
                local output
                output, hidden = self.decoder(input, hidden, encoder_outputs)
                outputs[t] = output
                local teacher_force = math.random() < teacher_forcing_ratio
                local top1 = output:argmax(2)
                if teacher_force then input = trg[t] else input = top1 end
            end
            return outputs
        end

        local attention = Attention(8, 8)
        local encoder = Encoder(input_dim, 6, 8, 8, 0.5)
        local decoder = Decoder(output_dim, 6, 8, 8, 0.5, attention)
        local model = Seq2Seq(encoder, decoder, device):to(device)

        local function init_weights(m)
            for name, param in m:named_parameters() do
                -- if "weight" in name:
                if name:find("weight", 1, true) then
                    nn.init.normal_(param.data, { mean = 0, std = 0.01 })
                else
                    nn.init.constant_(param.data, 0)
                end
            end
        end
        model:apply(init_weights)
        assert.are.equal(0, model.encoder.fc.bias:abs():sum():item())

        local optimizer = optim.Adam(model:parameters())
        local criterion = nn.CrossEntropyLoss({ ignore_index = pad_index })
        local first_train = evaluate_fn(model, train_data_loader, criterion, device)
        local best_valid_loss = math.huge
        for _ = 1, 6 do
            local train_loss = train_fn(model, train_data_loader, optimizer, criterion, 1.0, 0.5, device)
            local valid_loss = evaluate_fn(model, valid_data_loader, criterion, device)
            assert.is_true(train_loss == train_loss)
            if valid_loss < best_valid_loss then best_valid_loss = valid_loss end
        end
        assert.is_true(best_valid_loss < math.huge)
        assert.is_true(evaluate_fn(model, train_data_loader, criterion, device) < first_train)

        -- translate_sentence: attentions = torch.zeros(max_output_length, 1, len(ids)); attentions[i] = attention
        model:eval()
        tide.no_grad(function()
            local ids = { sos_index, 5, 6, eos_index }
            local tensor = tide.LongTensor(ids):unsqueeze(-1):to(device)
            local encoder_outputs, hidden = model.encoder(tensor)
            local attentions = tide.zeros(5, 1, #ids)
            local inputs = { sos_index }
            for i = 1, 5 do
                local inputs_tensor = tide.LongTensor({ inputs[#inputs] }):to(device)
                local output, att
                output, hidden, att = model.decoder(inputs_tensor, hidden, encoder_outputs)
                attentions[i] = att
                inputs[#inputs + 1] = output:argmax(-1):item()
            end
            assert.near(1, attentions[1]:sum():item(), 1e-5)
        end)
    end)
end)
