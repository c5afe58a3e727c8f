-- ported_scripts45_spec.lua — pytorch/examples' vision_transformer/main.py (ViT), language_translation
-- (Translator, PositionalEncoding, create_mask), legacy/snli/model.py (Bottle, Linear, Encoder,
-- SNLIClassifier), mnist_hogwild/train.py (train/test in one process), and facebookresearch/DiT's
-- models.py (modulate, TimestepEmbedder, LabelEmbedder, DiTBlock, FinalLayer, DiT, unpatchify,
-- forward_with_cfg, get_2d_sincos_pos_embed), ported line for line on tiny random data. The Python
-- line stands above each Lua line that differs from it; dims and indices are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list
local isinstance = tide.isinstance

---------------------------------------------------------------------------------------------
-- 1. pytorch/examples vision_transformer/main.py (not in the stored snapshot: written from the
--    script as published: PatchExtractor, InputEmbedding, EncoderBlock, ViT, TrainEval.train_fn)
---------------------------------------------------------------------------------------------
describe("vision_transformer/main.py", function()
    it("ViT: unfold patches, class token, MultiheadAttention encoder, Adam + CrossEntropyLoss", function()
        tide.manual_seed(0)
        local args = { patch_size = 16, n_channels = 3, latent_size = 32, num_heads = 4, num_encoders = 2,
                       dropout = 0.1, num_classes = 10, batch_size = 4, lr = 1e-3, weight_decay = 3e-2,
                       no_cuda = true, dry_run = false }

        -- class PatchExtractor(nn.Module):
        local PatchExtractor = nn.Module:extend("PatchExtractor")
        -- def __init__(self, patch_size=16):
        function PatchExtractor:init(opts)
            self.patch_size = (opts and opts.patch_size) or 16
        end

        function PatchExtractor:forward(input_data)
            -- batch_size, channels, height, width = input_data.size()
            local batch_size, channels, height, width = unpack(input_data:size()) -- luacheck: ignore
            -- assert height % self.patch_size == 0 and width % self.patch_size == 0, ...
            assert(height % self.patch_size == 0 and width % self.patch_size == 0)
            local num_patches_h = math.floor(height / self.patch_size)
            local num_patches_w = math.floor(width / self.patch_size)
            local num_patches = num_patches_h * num_patches_w
            -- patches = input_data.unfold(2, ...).unfold(3, ...).permute(0, 2, 3, 1, 4, 5).contiguous().view(batch_size, num_patches, -1)
            local patches = input_data:unfold(3, self.patch_size, self.patch_size)
                :unfold(4, self.patch_size, self.patch_size)
                :permute(1, 3, 4, 2, 5, 6)
                :contiguous()
                :view(batch_size, num_patches, -1)
            return patches
        end

        -- class InputEmbedding(nn.Module):
        local InputEmbedding = nn.Module:extend("InputEmbedding")
        function InputEmbedding:init(args_)
            self.patch_size = args_.patch_size
            self.n_channels = args_.n_channels
            self.latent_size = args_.latent_size
            -- use_cuda = not args.no_cuda and torch.cuda.is_available()
            local use_cuda = not args_.no_cuda and tide.cuda.is_available()
            self.device = tide.device(use_cuda and "cuda" or "cpu")
            self.batch_size = args_.batch_size
            self.input_size = self.patch_size * self.patch_size * self.n_channels
            self.LinearProjection = nn.Linear(self.input_size, self.latent_size)
            -- self.class_token = nn.Parameter(torch.randn(self.batch_size, 1, self.latent_size)).to(self.device)
            self.class_token = nn.Parameter(tide.randn(self.batch_size, 1, self.latent_size)):to(self.device)
            self.pos_embedding = nn.Parameter(tide.randn(self.batch_size, 1, self.latent_size)):to(self.device)
        end

        function InputEmbedding:forward(input_data)
            input_data = input_data:to(self.device)
            -- patchify = PatchExtractor(patch_size=self.patch_size)
            local patchify = PatchExtractor({ patch_size = self.patch_size })
            local patches = patchify(input_data)
            local linear_projection = self.LinearProjection(patches):to(self.device)
            -- b, n, _ = linear_projection.shape
            local b, n, _ = unpack(linear_projection.shape) -- luacheck: ignore
            -- linear_projection = torch.cat((self.class_token, linear_projection), dim=1)
            linear_projection = tide.cat({ self.class_token, linear_projection }, { dim = 2 })
            -- pos_embed = self.pos_embedding[:, :n + 1, :]
            local pos_embed = self.pos_embedding[{ {}, { 1, n + 1 }, {} }]
            -- linear_projection += pos_embed
            linear_projection:add_(pos_embed)
            return linear_projection
        end

        -- class EncoderBlock(nn.Module):
        local EncoderBlock = nn.Module:extend("EncoderBlock")
        function EncoderBlock:init(args_)
            self.latent_size = args_.latent_size
            self.num_heads = args_.num_heads
            self.dropout = args_.dropout
            self.norm = nn.LayerNorm(self.latent_size)
            -- self.attention = nn.MultiheadAttention(self.latent_size, self.num_heads, dropout=self.dropout)
            self.attention = nn.MultiheadAttention(self.latent_size, self.num_heads, { dropout = self.dropout })
            self.enc_MLP = nn.Sequential(
                nn.Linear(self.latent_size, self.latent_size * 4),
                nn.GELU(),
                nn.Dropout(self.dropout),
                nn.Linear(self.latent_size * 4, self.latent_size),
                nn.Dropout(self.dropout)
            )
        end

        function EncoderBlock:forward(emb_patches)
            local first_norm = self.norm(emb_patches)
            -- attention_out = self.attention(first_norm, first_norm, first_norm)[0]
            local attention_out = self.attention(first_norm, first_norm, first_norm)
            local first_added = attention_out + emb_patches
            local second_norm = self.norm(first_added)
            local mlp_out = self.enc_MLP(second_norm)
            local output = mlp_out + first_added
            return output
        end

        -- class ViT(nn.Module):
        local ViT = nn.Module:extend("ViT")
        function ViT:init(args_)
            self.num_encoders = args_.num_encoders
            self.latent_size = args_.latent_size
            self.num_classes = args_.num_classes
            self.dropout = args_.dropout
            self.embedding = InputEmbedding(args_)
            -- self.encoders = nn.ModuleList([EncoderBlock(args) for _ in range(self.num_encoders)])
            local encoders = {}
            for _ = 1, self.num_encoders do
                encoders[#encoders + 1] = EncoderBlock(args_)
            end
            self.encoders = nn.ModuleList(encoders)
            self.MLPHead = nn.Sequential(
                nn.LayerNorm(self.latent_size),
                nn.Linear(self.latent_size, self.latent_size),
                nn.Linear(self.latent_size, self.num_classes)
            )
        end

        function ViT:forward(test_input)
            local enc_output = self.embedding(test_input)
            -- for enc_layer in self.encoders:
            for _, enc_layer in ipairs(self.encoders) do
                enc_output = enc_layer(enc_output)
            end
            -- class_token_embed = enc_output[:, 0]
            local class_token_embed = enc_output[{ {}, 1 }]
            return self.MLPHead(class_token_embed)
        end

        local device = tide.device("cpu")
        -- model = ViT(args).to(device)
        local model = ViT(args):to(device)
        -- the class token and positional embedding are parameters of the model (.to on a CPU
        -- Parameter returns the Parameter itself)
        local names = {}
        for name in pairs(model:state_dict()) do
            names[name] = true
        end
        assert.is_true(names["embedding.class_token"])
        assert.is_true(names["embedding.pos_embedding"])
        local images = tide.rand(8, 3, 32, 32)
        local labels = tide.randint(1, 11, { 8 })
        local train_dataloader = tide.data.DataLoader(tide.data.TensorDataset(images, labels),
            { batch_size = args.batch_size, shuffle = false })
        -- optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
        local optimizer = optim.Adam(model:parameters(), { lr = args.lr, weight_decay = args.weight_decay })
        local criterion = nn.CrossEntropyLoss()

        -- def train_fn(self, current_epoch):
        local function train_fn()
            model:train()
            local total_loss = 0.0
            -- for t, data in enumerate(tk):
            -- images, labels = data (a batch's fields come after the index)
            for t, images_, labels_ in train_dataloader:enumerate() do -- luacheck: ignore t
                images_, labels_ = images_:to(device), labels_:to(device)
                optimizer:zero_grad()
                local logits = model(images_)
                local loss = criterion(logits, labels_)
                loss:backward()
                optimizer:step()
                total_loss = total_loss + loss:item()
            end
            -- return total_loss / len(self.train_dataloader) (len(x) is x:len(): 5.1's # reads a table raw)
            return total_loss / train_dataloader:len()
        end

        local first = train_fn()
        local last
        for _ = 1, 4 do
            last = train_fn()
        end
        assert_finite(first)
        assert.is_true(last < first)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. pytorch/examples language_translation/ (src/model.py, src/data.py's masks, main.py's train)
---------------------------------------------------------------------------------------------
describe("language_translation", function()
    it("Translator: nn.Transformer by name, PositionalEncoding, create_mask, one step on random ids", function()
        tide.manual_seed(0)
        -- class PositionalEncoding(nn.Module):
        local PositionalEncoding = nn.Module:extend("PositionalEncoding")
        function PositionalEncoding:init(emb_size, dropout, maxlen)
            maxlen = maxlen or 5000
            -- den = torch.exp(- torch.arange(0, emb_size, 2)* math.log(10000) / emb_size)
            local den = tide.exp(-tide.arange(0, emb_size, 2) * math.log(10000) / emb_size)
            local pos = tide.arange(0, maxlen):reshape(maxlen, 1)
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

        -- class Translator(nn.Module):
        local Translator = nn.Module:extend("Translator")
        function Translator:init(num_encoder_layers, num_decoder_layers, embed_size, num_heads,
                                 src_vocab_size, tgt_vocab_size, dim_feedforward, dropout)
            self.src_embedding = nn.Embedding(src_vocab_size, embed_size)
            self.tgt_embedding = nn.Embedding(tgt_vocab_size, embed_size)
            self.pos_enc = PositionalEncoding(embed_size, dropout)
            -- self.transformer = nn.Transformer(d_model=embed_size, nhead=num_heads, ...)
            self.transformer = nn.Transformer({
                d_model = embed_size,
                nhead = num_heads,
                num_encoder_layers = num_encoder_layers,
                num_decoder_layers = num_decoder_layers,
                dim_feedforward = dim_feedforward,
                dropout = dropout
            })
            self.ff = nn.Linear(embed_size, tgt_vocab_size)
            self:_init_weights()
        end

        function Translator:_init_weights()
            for _, p in ipairs(self:parameters()) do
                if p:dim() > 1 then
                    nn.init.xavier_uniform_(p)
                end
            end
        end

        function Translator:forward(src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask,
                                    memory_key_padding_mask)
            local src_emb = self.pos_enc(self.src_embedding(src))
            local tgt_emb = self.pos_enc(self.tgt_embedding(trg))
            -- outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None, src_padding_mask, ...)
            local outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, nil, src_padding_mask,
                tgt_padding_mask, memory_key_padding_mask)
            return self.ff(outs)
        end

        function Translator:encode(src, src_mask)
            local embed = self.src_embedding(src)
            local pos_enc = self.pos_enc(embed)
            return self.transformer.encoder(pos_enc, src_mask)
        end

        function Translator:decode(tgt, memory, tgt_mask)
            local embed = self.tgt_embedding(tgt)
            local pos_enc = self.pos_enc(embed)
            return self.transformer.decoder(pos_enc, memory, tgt_mask)
        end

        local DEVICE = tide.device("cpu")
        -- def generate_square_subsequent_mask(size, device):
        local function generate_square_subsequent_mask(size, device)
            -- mask = (torch.triu(torch.ones((size, size), device=device)) == 1).transpose(0, 1)
            local mask = (tide.triu(tide.ones({ size, size }, { device = device })):eq(1)):transpose(1, 2)
            -- mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
            mask = mask:float():masked_fill(mask:eq(0), -math.huge):masked_fill(mask:eq(1), 0.0)
            return mask
        end

        -- def create_mask(src, tgt, pad_idx, device):
        local function create_mask(src, tgt, pad_idx, device)
            local src_seq_len = src.shape[1]
            local tgt_seq_len = tgt.shape[1]
            local tgt_mask = generate_square_subsequent_mask(tgt_seq_len, device)
            -- src_mask = torch.zeros((src_seq_len, src_seq_len),device=device).type(torch.bool)
            local src_mask = tide.zeros({ src_seq_len, src_seq_len }, { device = device }):type(tide.bool)
            -- src_padding_mask = (src == pad_idx).transpose(0, 1)
            local src_padding_mask = (src:eq(pad_idx)):transpose(1, 2)
            local tgt_padding_mask = (tgt:eq(pad_idx)):transpose(1, 2)
            return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask
        end

        -- special_symbols = {"<unk>":0, "<pad>":1, "<bos>":2, "<eos>":3}
        local special_symbols = { ["<unk>"] = 0, ["<pad>"] = 1, ["<bos>"] = 2, ["<eos>"] = 3 }
        local src_vocab_size, tgt_vocab_size = 20, 24
        local model = Translator(1, 1, 16, 2, src_vocab_size, tgt_vocab_size, 32, 0.0):to(DEVICE)
        -- loss_fn = torch.nn.CrossEntropyLoss(ignore_index=special_symbols["<pad>"])
        local loss_fn = nn.CrossEntropyLoss({ ignore_index = special_symbols["<pad>"] })
        -- optim = torch.optim.Adam(model.parameters(), lr=opts.lr, betas=(0.9, 0.98), eps=1e-9)
        local opt = optim.Adam(model:parameters(), { lr = 1e-3, betas = { 0.9, 0.98 }, eps = 1e-9 })

        -- random (seq, batch) id batches with <bos> first and trailing <pad>s, as pad_sequence gives
        local src = tide.randint(4, src_vocab_size, { 7, 3 })
        local tgt = tide.randint(4, tgt_vocab_size, { 6, 3 })
        src[1]:fill_(special_symbols["<bos>"])
        tgt[1]:fill_(special_symbols["<bos>"])
        src[{ { 6, -1 }, 1 }] = special_symbols["<pad>"]
        tgt[{ { 5, -1 }, 2 }] = special_symbols["<pad>"]

        -- def train(model, train_dl, loss_fn, optim, special_symbols, opts):
        local function train()
            local losses = 0
            model:train()
            -- tgt_input = tgt[:-1, :]
            local tgt_input = tgt[{ { 1, -2 }, {} }]
            local src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input,
                special_symbols["<pad>"], DEVICE)
            local logits = model(src, tgt_input, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask,
                src_padding_mask)
            opt:zero_grad()
            -- tgt_out = tgt[1:, :]
            local tgt_out = tgt[{ { 2, -1 }, {} }]
            -- loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
            local loss = loss_fn(logits:reshape(-1, logits.shape[-1]), tgt_out:reshape(-1))
            loss:backward()
            opt:step()
            losses = losses + loss:item()
            return losses
        end

        local first = train()
        local last
        for _ = 1, 5 do
            last = train()
        end
        assert_finite(first)
        assert.is_true(last < first)

        -- greedy_decode's first step: memory = model.encode(src, src_mask); a decode over ys
        model:eval()
        local src1 = src[{ {}, { 1, 1 } }]
        local memory = model:encode(src1, tide.zeros({ 7, 7 }):type(tide.bool))
        -- ys = torch.ones(1, 1).fill_(start_symbol).type(torch.long).to(DEVICE)
        local ys = tide.ones(1, 1):fill_(special_symbols["<bos>"]):type(tide.long):to(DEVICE)
        local tgt_mask = (generate_square_subsequent_mask(ys:size(1), DEVICE):type(tide.bool)):to(DEVICE)
        local out = model:decode(ys, memory, tgt_mask)
        out = out:transpose(1, 2)
        -- prob = model.ff(out[:, -1]); _, next_word = torch.max(prob, dim=1)
        local prob = model.ff(out[{ {}, -1 }])
        local _, next_word = tide.max(prob, { dim = 2 })
        assert.are.same({ 1 }, { unpack(next_word:size()) })
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. pytorch/examples legacy/snli/model.py (train.py's step on random ids)
---------------------------------------------------------------------------------------------
describe("legacy/snli/model.py", function()
    it("Bottle/Linear (a mixin over nn.Linear), Encoder's LSTM state, SNLIClassifier, one Adam step", function()
        tide.manual_seed(0)
        -- class Bottle(nn.Module): a mixin: Python's class Linear(Bottle, nn.Linear) puts Bottle's
        -- forward before nn.Linear's in the MRO, so super(Bottle, self).forward is nn.Linear.forward.
        -- Lua has one parent per class: Bottle(Base) makes Base's subclass with Bottle's forward.
        local function Bottle(Base, name)
            local cls = Base:extend(name)
            function cls:forward(input)
                -- if len(input.size()) <= 2:
                if #input:size() <= 2 then
                    -- return super(Bottle, self).forward(input)
                    return Base.forward(self, input)
                end
                -- size = input.size()[:2]
                local size = input:size()[{ { 1, 2 } }]
                -- out = super(Bottle, self).forward(input.view(size[0]*size[1], -1))
                local out = Base.forward(self, input:view(size[1] * size[2], -1))
                return out:view(size[1], size[2], -1)
            end
            return cls
        end

        -- class Linear(Bottle, nn.Linear): pass
        local Linear = Bottle(nn.Linear, "Linear")

        -- class Encoder(nn.Module):
        local Encoder = nn.Module:extend("Encoder")
        function Encoder:init(config)
            self.config = config
            local input_size = config.projection and config.d_proj or config.d_embed
            local dropout = config.n_layers == 1 and 0 or config.dp_ratio
            -- self.rnn = nn.LSTM(input_size=input_size, hidden_size=config.d_hidden, num_layers=..., dropout=..., bidirectional=...)
            self.rnn = nn.LSTM({ input_size = input_size, hidden_size = config.d_hidden,
                                 num_layers = config.n_layers, dropout = dropout,
                                 bidirectional = config.birnn })
        end

        function Encoder:forward(inputs)
            -- batch_size = inputs.size()[1]
            local batch_size = inputs:size()[2]
            -- state_shape = self.config.n_cells, batch_size, self.config.d_hidden
            local state_shape = { self.config.n_cells, batch_size, self.config.d_hidden }
            -- h0 = c0 = inputs.new_zeros(state_shape)
            local h0 = inputs:new_zeros(state_shape)
            local c0 = h0
            -- outputs, (ht, ct) = self.rnn(inputs, (h0, c0))
            local outputs, state = self.rnn(inputs, { h0, c0 }) -- luacheck: ignore outputs
            local ht = state[1]
            -- return ht[-1] if not self.config.birnn else ht[-2:].transpose(0, 1).contiguous().view(batch_size, -1)
            if not self.config.birnn then
                return ht[-1]
            end
            return ht[{ { -2, -1 } }]:transpose(1, 2):contiguous():view(batch_size, -1)
        end

        -- class SNLIClassifier(nn.Module):
        local SNLIClassifier = nn.Module:extend("SNLIClassifier")
        function SNLIClassifier:init(config)
            self.config = config
            self.embed = nn.Embedding(config.n_embed, config.d_embed)
            self.projection = Linear(config.d_embed, config.d_proj)
            self.encoder = Encoder(config)
            -- self.dropout = nn.Dropout(p=config.dp_ratio)
            self.dropout = nn.Dropout({ p = config.dp_ratio })
            self.relu = nn.ReLU()
            local seq_in_size = 2 * config.d_hidden
            if self.config.birnn then
                seq_in_size = seq_in_size * 2
            end
            -- lin_config = [seq_in_size]*2
            local lin_config = { seq_in_size, seq_in_size }
            self.out = nn.Sequential(
                -- Linear(*lin_config),
                Linear(unpack(lin_config)),
                self.relu,
                self.dropout,
                Linear(unpack(lin_config)),
                self.relu,
                self.dropout,
                Linear(unpack(lin_config)),
                self.relu,
                self.dropout,
                Linear(seq_in_size, config.d_out))
        end

        function SNLIClassifier:forward(batch)
            local prem_embed = self.embed(batch.premise)
            local hypo_embed = self.embed(batch.hypothesis)
            if self.config.fix_emb then
                prem_embed = prem_embed:detach()
                hypo_embed = hypo_embed:detach()
            end
            if self.config.projection then
                prem_embed = self.relu(self.projection(prem_embed))
                hypo_embed = self.relu(self.projection(hypo_embed))
            end
            local premise = self.encoder(prem_embed)
            local hypothesis = self.encoder(hypo_embed)
            -- scores = self.out(torch.cat([premise, hypothesis], 1))
            local scores = self.out(tide.cat({ premise, hypothesis }, 2))
            return scores
        end

        -- train.py: config.n_cells = config.n_layers (doubled for birnn); d_out = len(answers.vocab)
        local config = { n_embed = 30, d_embed = 12, d_proj = 10, projection = true, d_hidden = 8,
                         n_layers = 1, dp_ratio = 0.2, birnn = true, fix_emb = false, d_out = 4 }
        config.n_cells = config.n_layers
        if config.birnn then
            config.n_cells = config.n_cells * 2
        end
        local model = SNLIClassifier(config)
        -- the Bottle forward on (seq, batch, d) input and on 2-D input
        assert.are.same({ 5, 3, 10 }, { unpack(model.projection(tide.randn(5, 3, 12)):size()) })
        assert.are.same({ 3, 10 }, { unpack(model.projection(tide.randn(3, 12)):size()) })
        -- criterion = nn.CrossEntropyLoss(); opt = O.Adam(model.parameters(), lr=config.lr)
        local criterion = nn.CrossEntropyLoss()
        local opt = optim.Adam(model:parameters(), { lr = 1e-2 })
        -- batch.premise / batch.hypothesis: (seq, batch) ids; batch.label: (batch,)
        local batch = { premise = tide.randint(0, 30, { 6, 5 }), hypothesis = tide.randint(0, 30, { 4, 5 }),
                        label = tide.randint(1, 5, { 5 }) }
        local first, last
        for _ = 1, 6 do
            model:train()
            opt:zero_grad()
            local answer = model(batch)
            -- loss = criterion(answer, batch.label)
            local loss = criterion(answer, batch.label)
            loss:backward()
            opt:step()
            first = first or loss:item()
            last = loss:item()
        end
        assert_finite(first)
        assert.is_true(last < first)
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. pytorch/examples mnist_hogwild/train.py and main.py (tide has no worker processes:
--    tide.multiprocessing's Process runs train(rank, ...) in this process when started, so the
--    ranks train one after another on the one model; model.share_memory() is a no-op)
---------------------------------------------------------------------------------------------
describe("mnist_hogwild/train.py", function()
    it("train(rank, ...) and test(...) with DataLoader(dataset, **dataloader_kwargs), nll_loss, output.max(1)", function()
        -- main.py's Net
        local Net = nn.Module:extend("Net")
        function Net:init()
            self.conv1 = nn.Conv2d(1, 4, 5)
            self.conv2 = nn.Conv2d(4, 8, 5)
            self.conv2_drop = nn.Dropout2d()
            self.fc1 = nn.Linear(8 * 4 * 4, 16)
            self.fc2 = nn.Linear(16, 10)
        end

        function Net:forward(x)
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = x:view(-1, 8 * 4 * 4)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, { training = self.training })
            x = self.fc2(x)
            -- return F.log_softmax(x, dim=1)
            return F.log_softmax(x, { dim = 2 })
        end

        local log = {}
        local function print_(s)
            log[#log + 1] = s
        end

        local function train_epoch(epoch, args, model, device, data_loader, optimizer)
            model:train()
            -- pid = os.getpid()
            local pid = 0
            -- for batch_idx, (data, target) in enumerate(data_loader):
            for batch_idx, data, target in data_loader:enumerate(0) do
                optimizer:zero_grad()
                local output = model(data:to(device))
                local loss = F.nll_loss(output, target:to(device))
                loss:backward()
                optimizer:step()
                if batch_idx % args.log_interval == 0 then
                    -- print('{}\tTrain Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(pid, epoch, batch_idx * len(data), len(data_loader.dataset), 100. * batch_idx / len(data_loader), loss.item()))
                    print_(string.format("%d\tTrain Epoch: %d [%d/%d (%.0f%%)]\tLoss: %.6f", pid, epoch,
                        batch_idx * #data, data_loader.dataset:len(), 100. * batch_idx / data_loader:len(), loss:item()))
                    if args.dry_run then
                        break
                    end
                end
            end
        end

        local function test_epoch(model, device, data_loader)
            model:eval()
            local test_loss = 0
            local correct = 0
            -- with torch.no_grad():
            tide.no_grad(function()
                for _, data, target in data_loader:enumerate() do
                    local output = model(data:to(device))
                    -- test_loss += F.nll_loss(output, target.to(device), reduction='sum').item()
                    test_loss = test_loss + F.nll_loss(output, target:to(device), { reduction = "sum" }):item()
                    -- pred = output.max(1)[1]
                    local _, pred = output:max(2)
                    correct = correct + pred:eq(target:to(device)):sum():item()
                end
            end)
            test_loss = test_loss / data_loader.dataset:len()
            print_(string.format("\nTest set: Average loss: %.4f, Accuracy: %d/%d (%.0f%%)\n", test_loss, correct,
                data_loader.dataset:len(), 100. * correct / data_loader.dataset:len()))
            return test_loss
        end

        -- def train(rank, args, model, device, dataset, dataloader_kwargs):
        local function train(rank, args, model, device, dataset, dataloader_kwargs)
            tide.manual_seed(args.seed + rank)
            -- train_loader = torch.utils.data.DataLoader(dataset, **dataloader_kwargs)
            local train_loader = tide.data.DataLoader(dataset, dataloader_kwargs)
            -- optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
            local optimizer = optim.SGD(model:parameters(), { lr = args.lr, momentum = args.momentum })
            for epoch = 1, args.epochs do
                train_epoch(epoch, args, model, device, train_loader, optimizer)
            end
        end

        local function test(args, model, device, dataset, dataloader_kwargs)
            tide.manual_seed(args.seed)
            local test_loader = tide.data.DataLoader(dataset, dataloader_kwargs)
            return test_epoch(model, device, test_loader)
        end

        local args = { seed = 1, lr = 0.05, momentum = 0.5, epochs = 2, log_interval = 2, dry_run = false,
                       num_processes = 2, batch_size = 8 }
        -- import torch.multiprocessing as mp (tide.multiprocessing: a Process runs its target in
        -- this process when started: the workers run one after another)
        local mp = tide.multiprocessing or require("tide.multiprocessing")
        local device = tide.device("cpu")
        -- kwargs = {'batch_size': args.batch_size, 'shuffle': True}
        local kwargs = { batch_size = args.batch_size, shuffle = true }
        local images = tide.randn(32, 1, 28, 28)
        local labels = tide.randint(1, 11, { 32 })
        local dataset1 = tide.data.TensorDataset(images, labels)
        local dataset2 = dataset1

        tide.manual_seed(args.seed)
        -- mp.set_start_method('spawn', force=True)
        mp.set_start_method("spawn", { force = true })
        assert.are.equal("spawn", mp.get_start_method())

        local model = Net():to(device)
        model:share_memory() -- gradients are allocated lazily, so they are not shared here
        local before = test(args, model, device, dataset2, kwargs)

        local processes = {}
        -- for rank in range(args.num_processes):
        for rank = 0, args.num_processes - 1 do
            -- p = mp.Process(target=train, args=(rank, args, model, device, dataset1, kwargs))
            local p = mp.Process({ target = train, args = { rank, args, model, device, dataset1, kwargs } })
            -- We first train the model across `num_processes` processes
            p:start()
            processes[#processes + 1] = p
        end
        -- for p in processes: p.join()
        for _, p in ipairs(processes) do
            p:join()
            assert.are.equal(0, p.exitcode)
        end
        -- Once training is complete, we can test the model
        local after = test(args, model, device, dataset2, kwargs)
        assert_finite(before)
        assert.is_true(after < before)
        assert.is_truthy(log[2]:find("Train Epoch: 1 [0/32 (0%)]", 1, true), log[2])
    end)

    it("tide.multiprocessing: Process by name, start twice, a target's error, set_start_method", function()
        local mp = tide.multiprocessing or require("tide.multiprocessing")
        local got = {}
        local p = mp.Process({ target = function(a, b, kw) got = { a, b, kw.scale } end, args = { 1, 2 },
                               kwargs = { scale = 3 } })
        p:start()
        p:join()
        assert.are.same({ 1, 2, 3 }, got)
        assert.is_false(p:is_alive())
        assert.has_error(function() p:start() end,
            "tide: multiprocessing.Process: cannot start a process twice (" .. p.name .. ")")
        -- Python's positional Process(group, target, ...) is refused, naming the table form
        assert.has_error(function() mp.Process(print, { 1 }) end)
        local ok, err = pcall(mp.Process, print, { 1 })
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("mp.Process({target = train, args = {rank, ...}})", 1, true))
        ok, err = pcall(mp.Process, { target = print, arg = { 1 } })
        assert.is_truthy(tostring(err):find("unknown argument arg", 1, true))
        -- a target's error comes out of start(), naming the process
        local q = mp.Process({ target = function() error("boom") end, name = "worker-3" })
        ok, err = pcall(q.start, q)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("tide: multiprocessing.Process worker-3: its target raised:", 1, true))
        assert.are.equal(1, q.exitcode)
        -- set_start_method twice needs force, as Python's
        mp.set_start_method("spawn", { force = true })
        ok, err = pcall(mp.set_start_method, "fork")
        assert.is_truthy(tostring(err):find("context has already been set", 1, true))
        ok, err = pcall(mp.set_start_method, "threads", { force = true })
        assert.is_truthy(tostring(err):find('got threads', 1, true))
        assert.are.equal("spawn", mp.get_start_method())
        assert.are.equal(mp, mp.get_context("spawn"))
        assert.is_true(mp.cpu_count() >= 1)
    end)
end)

---------------------------------------------------------------------------------------------
-- 5. facebookresearch/DiT models.py. timm's PatchEmbed, Attention and Mlp are not in tide:
--    they are written out below as timm defines them (timm.layers.patch_embed / vision_transformer
--    / mlp), with the non-fused attention path.
---------------------------------------------------------------------------------------------
describe("facebookresearch/DiT models.py", function()
    -- timm's PatchEmbed(img_size, patch_size, in_chans, embed_dim, bias=True)
    local PatchEmbed = nn.Module:extend("PatchEmbed")
    function PatchEmbed:init(img_size, patch_size, in_chans, embed_dim, opts)
        opts = opts or {}
        local bias = opts.bias
        if bias == nil then bias = true end
        -- self.img_size = to_2tuple(img_size); self.patch_size = to_2tuple(patch_size)
        self.img_size = { img_size, img_size }
        self.patch_size = { patch_size, patch_size }
        -- self.grid_size = tuple([s // p for s, p in zip(self.img_size, self.patch_size)])
        self.grid_size = { math.floor(img_size / patch_size), math.floor(img_size / patch_size) }
        self.num_patches = self.grid_size[1] * self.grid_size[2]
        -- self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size, bias=bias)
        self.proj = nn.Conv2d(in_chans, embed_dim, { kernel_size = self.patch_size, stride = self.patch_size,
                                                     bias = bias })
        self.norm = nn.Identity()
    end

    function PatchEmbed:forward(x)
        x = self.proj(x)
        -- x = x.flatten(2).transpose(1, 2)  # NCHW -> NLC
        x = x:flatten(3):transpose(2, 3)
        return self.norm(x)
    end

    -- timm's Attention(dim, num_heads=8, qkv_bias=False, attn_drop=0., proj_drop=0.)
    local Attention = nn.Module:extend("Attention")
    function Attention:init(dim, opts)
        opts = opts or {}
        self.num_heads = opts.num_heads or 8
        -- self.head_dim = dim // num_heads; self.scale = self.head_dim ** -0.5
        self.head_dim = math.floor(dim / self.num_heads)
        self.scale = self.head_dim ^ -0.5
        self.qkv = nn.Linear(dim, dim * 3, { bias = opts.qkv_bias or false })
        self.q_norm = nn.Identity()
        self.k_norm = nn.Identity()
        self.attn_drop = nn.Dropout(opts.attn_drop or 0.)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(opts.proj_drop or 0.)
    end

    function Attention:forward(x)
        -- B, N, C = x.shape
        local B, N, C = unpack(x.shape)
        -- qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        local qkv = self.qkv(x):reshape(B, N, 3, self.num_heads, self.head_dim):permute(3, 1, 4, 2, 5)
        -- q, k, v = qkv.unbind(0)
        local q, k, v = unpack(qkv:unbind(1))
        q, k = self.q_norm(q), self.k_norm(k)
        q = q * self.scale
        -- attn = q @ k.transpose(-2, -1)
        local attn = q:matmul(k:transpose(-2, -1))
        attn = attn:softmax({ dim = -1 })
        attn = self.attn_drop(attn)
        x = attn:matmul(v)
        -- x = x.transpose(1, 2).reshape(B, N, C)
        x = x:transpose(2, 3):reshape(B, N, C)
        x = self.proj(x)
        x = self.proj_drop(x)
        return x
    end

    -- timm's Mlp(in_features, hidden_features=None, out_features=None, act_layer=nn.GELU, bias=True, drop=0.)
    local Mlp = nn.Module:extend("Mlp")
    function Mlp:init(opts)
        local in_features = opts.in_features
        local out_features = opts.out_features or in_features
        local hidden_features = opts.hidden_features or in_features
        local act_layer = opts.act_layer or nn.GELU
        local drop = opts.drop or 0.
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = act_layer()
        self.drop1 = nn.Dropout(drop)
        self.norm = nn.Identity()
        self.fc2 = nn.Linear(hidden_features, out_features)
        self.drop2 = nn.Dropout(drop)
    end

    function Mlp:forward(x)
        x = self.fc1(x)
        x = self.act(x)
        x = self.drop1(x)
        x = self.norm(x)
        x = self.fc2(x)
        x = self.drop2(x)
        return x
    end

    -- def modulate(x, shift, scale):
    local function modulate(x, shift, scale)
        -- return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)
        return x * (1 + scale:unsqueeze(2)) + shift:unsqueeze(2)
    end

    -- class TimestepEmbedder(nn.Module):
    local TimestepEmbedder = nn.Module:extend("TimestepEmbedder")
    function TimestepEmbedder:init(hidden_size, frequency_embedding_size)
        frequency_embedding_size = frequency_embedding_size or 256
        self.mlp = nn.Sequential(
            -- nn.Linear(frequency_embedding_size, hidden_size, bias=True),
            nn.Linear(frequency_embedding_size, hidden_size, { bias = true }),
            nn.SiLU(),
            nn.Linear(hidden_size, hidden_size, { bias = true })
        )
        self.frequency_embedding_size = frequency_embedding_size
    end

    -- @staticmethod
    -- def timestep_embedding(t, dim, max_period=10000):
    function TimestepEmbedder.timestep_embedding(t, dim, max_period)
        max_period = max_period or 10000
        -- half = dim // 2
        local half = math.floor(dim / 2)
        -- freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half).to(device=t.device)
        local freqs = tide.exp(
            -math.log(max_period) * tide.arange({ start = 0, ["end"] = half, dtype = tide.float32 }) / half
        ):to({ device = t.device })
        -- args = t[:, None].float() * freqs[None]
        local args = t[{ {}, tide.newaxis }]:float() * freqs[{ tide.newaxis }]
        -- embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
        local embedding = tide.cat({ tide.cos(args), tide.sin(args) }, { dim = -1 })
        if dim % 2 ~= 0 then
            -- embedding = torch.cat([embedding, torch.zeros_like(embedding[:, :1])], dim=-1)
            embedding = tide.cat({ embedding, tide.zeros_like(embedding[{ {}, { 1, 1 } }]) }, { dim = -1 })
        end
        return embedding
    end

    function TimestepEmbedder:forward(t)
        -- t_freq = self.timestep_embedding(t, self.frequency_embedding_size)
        local t_freq = self.timestep_embedding(t, self.frequency_embedding_size)
        local t_emb = self.mlp(t_freq)
        return t_emb
    end

    -- class LabelEmbedder(nn.Module):
    local LabelEmbedder = nn.Module:extend("LabelEmbedder")
    function LabelEmbedder:init(num_classes, hidden_size, dropout_prob)
        -- use_cfg_embedding = dropout_prob > 0
        local use_cfg_embedding = dropout_prob > 0
        -- self.embedding_table = nn.Embedding(num_classes + use_cfg_embedding, hidden_size)
        self.embedding_table = nn.Embedding(num_classes + (use_cfg_embedding and 1 or 0), hidden_size)
        self.num_classes = num_classes
        self.dropout_prob = dropout_prob
    end

    -- def token_drop(self, labels, force_drop_ids=None):
    function LabelEmbedder:token_drop(labels, force_drop_ids)
        local drop_ids
        if force_drop_ids == nil then
            -- drop_ids = torch.rand(labels.shape[0], device=labels.device) < self.dropout_prob
            drop_ids = tide.rand(labels.shape[1], { device = labels.device }):lt(self.dropout_prob)
        else
            -- drop_ids = force_drop_ids == 1
            drop_ids = force_drop_ids:eq(1)
        end
        -- labels = torch.where(drop_ids, self.num_classes, labels)
        -- (labels are 1-based: the CFG "null" class is num_classes + 1, the table's last row)
        labels = tide.where(drop_ids, self.num_classes + 1, labels)
        return labels
    end

    function LabelEmbedder:forward(labels, train, force_drop_ids)
        local use_dropout = self.dropout_prob > 0
        if (train and use_dropout) or (force_drop_ids ~= nil) then
            labels = self:token_drop(labels, force_drop_ids)
        end
        local embeddings = self.embedding_table(labels)
        return embeddings
    end

    -- class DiTBlock(nn.Module):
    local DiTBlock = nn.Module:extend("DiTBlock")
    -- def __init__(self, hidden_size, num_heads, mlp_ratio=4.0, **block_kwargs):
    function DiTBlock:init(hidden_size, num_heads, opts)
        local mlp_ratio = (opts and opts.mlp_ratio) or 4.0
        -- self.norm1 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
        self.norm1 = nn.LayerNorm(hidden_size, { elementwise_affine = false, eps = 1e-6 })
        -- self.attn = Attention(hidden_size, num_heads=num_heads, qkv_bias=True, **block_kwargs)
        self.attn = Attention(hidden_size, { num_heads = num_heads, qkv_bias = true })
        self.norm2 = nn.LayerNorm(hidden_size, { elementwise_affine = false, eps = 1e-6 })
        -- mlp_hidden_dim = int(hidden_size * mlp_ratio)
        local mlp_hidden_dim = math.floor(hidden_size * mlp_ratio)
        -- approx_gelu = lambda: nn.GELU(approximate="tanh")
        local approx_gelu = function() return nn.GELU({ approximate = "tanh" }) end
        -- self.mlp = Mlp(in_features=hidden_size, hidden_features=mlp_hidden_dim, act_layer=approx_gelu, drop=0)
        self.mlp = Mlp({ in_features = hidden_size, hidden_features = mlp_hidden_dim, act_layer = approx_gelu,
                         drop = 0 })
        self.adaLN_modulation = nn.Sequential(
            nn.SiLU(),
            nn.Linear(hidden_size, 6 * hidden_size, { bias = true })
        )
    end

    function DiTBlock:forward(x, c)
        -- shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = self.adaLN_modulation(c).chunk(6, dim=1)
        local shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp =
            unpack(self.adaLN_modulation(c):chunk(6, { dim = 2 }))
        x = x + gate_msa:unsqueeze(2) * self.attn(modulate(self.norm1(x), shift_msa, scale_msa))
        x = x + gate_mlp:unsqueeze(2) * self.mlp(modulate(self.norm2(x), shift_mlp, scale_mlp))
        return x
    end

    -- class FinalLayer(nn.Module):
    local FinalLayer = nn.Module:extend("FinalLayer")
    function FinalLayer:init(hidden_size, patch_size, out_channels)
        self.norm_final = nn.LayerNorm(hidden_size, { elementwise_affine = false, eps = 1e-6 })
        self.linear = nn.Linear(hidden_size, patch_size * patch_size * out_channels, { bias = true })
        self.adaLN_modulation = nn.Sequential(
            nn.SiLU(),
            nn.Linear(hidden_size, 2 * hidden_size, { bias = true })
        )
    end

    function FinalLayer:forward(x, c)
        -- shift, scale = self.adaLN_modulation(c).chunk(2, dim=1)
        local shift, scale = unpack(self.adaLN_modulation(c):chunk(2, { dim = 2 }))
        x = modulate(self.norm_final(x), shift, scale)
        x = self.linear(x)
        return x
    end

    -- https://github.com/facebookresearch/mae/blob/main/util/pos_embed.py (numpy, here tide)
    -- def get_1d_sincos_pos_embed_from_grid(embed_dim, pos):
    local function get_1d_sincos_pos_embed_from_grid(embed_dim, pos)
        assert(embed_dim % 2 == 0)
        -- omega = np.arange(embed_dim // 2, dtype=np.float64)
        local omega = tide.arange(math.floor(embed_dim / 2), { dtype = tide.float64 })
        -- omega /= embed_dim / 2.
        omega:div_(embed_dim / 2.)
        -- omega = 1. / 10000**omega  # (D/2,)
        omega = 1. / tide.pow(10000, omega)
        -- pos = pos.reshape(-1)  # (M,)
        pos = pos:reshape(-1)
        -- out = np.einsum('m,d->md', pos, omega)  # (M, D/2), outer product
        local out = tide.einsum("m,d->md", pos:double(), omega)
        local emb_sin = tide.sin(out)
        local emb_cos = tide.cos(out)
        -- emb = np.concatenate([emb_sin, emb_cos], axis=1)  # (M, D)
        local emb = tide.cat({ emb_sin, emb_cos }, { dim = 2 })
        return emb
    end

    -- def get_2d_sincos_pos_embed_from_grid(embed_dim, grid):
    local function get_2d_sincos_pos_embed_from_grid(embed_dim, grid)
        assert(embed_dim % 2 == 0)
        -- emb_h = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[0])  # (H*W, D/2)
        local emb_h = get_1d_sincos_pos_embed_from_grid(math.floor(embed_dim / 2), grid[1])
        local emb_w = get_1d_sincos_pos_embed_from_grid(math.floor(embed_dim / 2), grid[2])
        local emb = tide.cat({ emb_h, emb_w }, { dim = 2 })
        return emb
    end

    -- def get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token=False, extra_tokens=0):
    local function get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token, extra_tokens)
        extra_tokens = extra_tokens or 0
        -- grid_h = np.arange(grid_size, dtype=np.float32)
        local grid_h = tide.arange(grid_size, { dtype = tide.float32 })
        local grid_w = tide.arange(grid_size, { dtype = tide.float32 })
        -- grid = np.meshgrid(grid_w, grid_h)  # here w goes first (numpy's default indexing is "xy")
        local grid = tide.meshgrid(grid_w, grid_h, { indexing = "xy" })
        -- grid = np.stack(grid, axis=0)
        grid = tide.stack(grid, { dim = 1 })
        grid = grid:reshape({ 2, 1, grid_size, grid_size })
        local pos_embed = get_2d_sincos_pos_embed_from_grid(embed_dim, grid)
        if cls_token and extra_tokens > 0 then
            -- pos_embed = np.concatenate([np.zeros([extra_tokens, embed_dim]), pos_embed], axis=0)
            pos_embed = tide.cat({ tide.zeros({ extra_tokens, embed_dim }, { dtype = tide.float64 }), pos_embed },
                { dim = 1 })
        end
        return pos_embed
    end

    -- class DiT(nn.Module):
    local DiT = nn.Module:extend("DiT")
    -- nn.signature lets DiT(depth=2, hidden_size=32, ...) be called with a table by name
    function DiT:init(input_size, patch_size, in_channels, hidden_size, depth, num_heads, mlp_ratio,
                      class_dropout_prob, num_classes, learn_sigma)
        self.learn_sigma = learn_sigma
        self.in_channels = in_channels
        self.out_channels = learn_sigma and in_channels * 2 or in_channels
        self.patch_size = patch_size
        self.num_heads = num_heads

        -- self.x_embedder = PatchEmbed(input_size, patch_size, in_channels, hidden_size, bias=True)
        self.x_embedder = PatchEmbed(input_size, patch_size, in_channels, hidden_size, { bias = true })
        self.t_embedder = TimestepEmbedder(hidden_size)
        self.y_embedder = LabelEmbedder(num_classes, hidden_size, class_dropout_prob)
        local num_patches = self.x_embedder.num_patches
        -- self.pos_embed = nn.Parameter(torch.zeros(1, num_patches, hidden_size), requires_grad=False)
        self.pos_embed = nn.Parameter(tide.zeros(1, num_patches, hidden_size), { requires_grad = false })

        -- self.blocks = nn.ModuleList([DiTBlock(hidden_size, num_heads, mlp_ratio=mlp_ratio) for _ in range(depth)])
        local blocks = {}
        for _ = 1, depth do
            blocks[#blocks + 1] = DiTBlock(hidden_size, num_heads, { mlp_ratio = mlp_ratio })
        end
        self.blocks = nn.ModuleList(blocks)
        self.final_layer = FinalLayer(hidden_size, patch_size, self.out_channels)
        self:initialize_weights()
    end
    nn.signature(DiT, "input_size=32, patch_size=2, in_channels=4, hidden_size=1152, depth=28, num_heads=16, "
        .. "mlp_ratio=4.0, class_dropout_prob=0.1, num_classes=1000, learn_sigma=True")

    function DiT:initialize_weights()
        -- Initialize transformer layers:
        local function _basic_init(module)
            if isinstance(module, nn.Linear) then
                tide.nn.init.xavier_uniform_(module.weight)
                if module.bias ~= nil then
                    nn.init.constant_(module.bias, 0)
                end
            end
        end
        self:apply(_basic_init)

        -- pos_embed = get_2d_sincos_pos_embed(self.pos_embed.shape[-1], int(self.x_embedder.num_patches ** 0.5))
        local pos_embed = get_2d_sincos_pos_embed(self.pos_embed.shape[-1],
            math.floor(self.x_embedder.num_patches ^ 0.5))
        -- self.pos_embed.data.copy_(torch.from_numpy(pos_embed).float().unsqueeze(0))
        self.pos_embed.data:copy_(pos_embed:float():unsqueeze(1))

        -- Initialize patch_embed like nn.Linear (instead of nn.Conv2d):
        local w = self.x_embedder.proj.weight.data
        -- nn.init.xavier_uniform_(w.view([w.shape[0], -1]))
        nn.init.xavier_uniform_(w:view({ w.shape[1], -1 }))
        nn.init.constant_(self.x_embedder.proj.bias, 0)

        -- nn.init.normal_(self.y_embedder.embedding_table.weight, std=0.02)
        nn.init.normal_(self.y_embedder.embedding_table.weight, { std = 0.02 })

        -- nn.init.normal_(self.t_embedder.mlp[0].weight, std=0.02)
        nn.init.normal_(self.t_embedder.mlp[1].weight, { std = 0.02 })
        nn.init.normal_(self.t_embedder.mlp[3].weight, { std = 0.02 })

        -- Zero-out adaLN modulation layers in DiT blocks:
        for _, block in ipairs(self.blocks) do
            -- nn.init.constant_(block.adaLN_modulation[-1].weight, 0)
            nn.init.constant_(block.adaLN_modulation[-1].weight, 0)
            nn.init.constant_(block.adaLN_modulation[-1].bias, 0)
        end

        -- Zero-out output layers:
        nn.init.constant_(self.final_layer.adaLN_modulation[-1].weight, 0)
        nn.init.constant_(self.final_layer.adaLN_modulation[-1].bias, 0)
        nn.init.constant_(self.final_layer.linear.weight, 0)
        nn.init.constant_(self.final_layer.linear.bias, 0)
    end

    function DiT:unpatchify(x)
        local c = self.out_channels
        -- p = self.x_embedder.patch_size[0]
        local p = self.x_embedder.patch_size[1]
        -- h = w = int(x.shape[1] ** 0.5)
        local h = math.floor(x.shape[2] ^ 0.5)
        local w = h
        assert(h * w == x.shape[2])
        -- x = x.reshape(shape=(x.shape[0], h, w, p, p, c))
        x = x:reshape({ shape = { x.shape[1], h, w, p, p, c } })
        -- x = torch.einsum('nhwpqc->nchpwq', x)
        x = tide.einsum("nhwpqc->nchpwq", x)
        -- imgs = x.reshape(shape=(x.shape[0], c, h * p, h * p))
        local imgs = x:reshape({ shape = { x.shape[1], c, h * p, h * p } })
        return imgs
    end

    function DiT:forward(x, t, y)
        x = self.x_embedder(x) + self.pos_embed -- (N, T, D), where T = H * W / patch_size ** 2
        t = self.t_embedder(t)                  -- (N, D)
        y = self.y_embedder(y, self.training)   -- (N, D)
        local c = t + y                         -- (N, D)
        for _, block in ipairs(self.blocks) do
            x = block(x, c)                     -- (N, T, D)
        end
        x = self.final_layer(x, c)              -- (N, T, patch_size ** 2 * out_channels)
        x = self:unpatchify(x)                  -- (N, out_channels, H, W)
        return x
    end

    function DiT:forward_with_cfg(x, t, y, cfg_scale)
        -- half = x[: len(x) // 2]
        local half = x[{ { 1, math.floor(#x / 2) } }]
        -- combined = torch.cat([half, half], dim=0)
        local combined = tide.cat({ half, half }, { dim = 1 })
        local model_out = self:forward(combined, t, y)
        -- eps, rest = model_out[:, :3], model_out[:, 3:]
        local eps, rest = model_out[{ {}, { 1, 3 } }], model_out[{ {}, { 4, -1 } }]
        -- cond_eps, uncond_eps = torch.split(eps, len(eps) // 2, dim=0)
        local cond_eps, uncond_eps = unpack(tide.split(eps, math.floor(#eps / 2), { dim = 1 }))
        local half_eps = uncond_eps + cfg_scale * (cond_eps - uncond_eps)
        eps = tide.cat({ half_eps, half_eps }, { dim = 1 })
        return tide.cat({ eps, rest }, { dim = 2 })
    end

    it("get_2d_sincos_pos_embed and timestep_embedding match numpy / PyTorch", function()
        local pe = get_2d_sincos_pos_embed(32, 4)
        assert.are.same({ 16, 32 }, { unpack(pe:size()) })
        -- numpy: pe[5], pe[:, 3], pe.sum()
        assert_close_list({ 0.8414709848078965, 0.3109835929071858, 0.09983341664682817, 0.03161750640243371,
            0.009999833334166664, 0.003162272389708248, 0.0009999998333333417, 0.0003162277607463752,
            0.5403023058681397, 0.9504152802551828, 0.9950041652780256, 0.999500041665278, 0.9999500004166654,
            0.9999950000041667, 0.9999995000000417, 0.9999999500000003 }, pe[6][{ { 1, 16 } }]:tolist(), 1e-6, "pe[5]")
        -- (h = w = 1: numpy's second half repeats the first)
        assert.is_true(tide.equal(pe[6][{ { 1, 16 } }], pe[6][{ { 17, 32 } }]))
        assert_close_list({ 0.0, 0.03161750640243371, 0.06320339793316936, 0.0947260913327461, 0.0,
            0.03161750640243371, 0.06320339793316936, 0.0947260913327461 }, pe[{ { 1, 8 }, 4 }]:tolist(), 1e-6,
            "pe[:8, 3]")
        assert.is_true(math.abs(pe:sum():item() - 254.9890139389944) < 1e-6)
        -- "here w goes first": row 6 (h = 1, w = 2) starts with sin(2), its second half with sin(1)
        assert.is_true(math.abs(pe[7][1]:item() - math.sin(2)) < 1e-6)
        assert.is_true(math.abs(pe[7][17]:item() - math.sin(1)) < 1e-6)
        -- TimestepEmbedder.timestep_embedding(torch.tensor([0., 3.5, 999.]), 7)
        local e = TimestepEmbedder.timestep_embedding(tide.tensor({ 0., 3.5, 999. }), 7)
        assert_close_list({ 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, -0.9364566802978516, 0.9868330955505371,
            0.9999715685844421, -0.35078322887420654, 0.1617419570684433, 0.007540450431406498, 0.0,
            0.9996498227119446, -0.7286707162857056, -0.549264669418335, -0.02646075189113617,
            0.6848641633987427, 0.8356484770774841, 0.0 }, e:flatten():tolist(), 1e-4, "timestep_embedding")
    end)

    it("DiT: zero-initialised adaLN/final layer, unpatchify, token_drop, forward_with_cfg, a few AdamW steps", function()
        tide.manual_seed(0)
        -- model = DiT(depth=2, hidden_size=32, patch_size=2, num_heads=4, input_size=8, num_classes=10)
        local model = DiT({ depth = 2, hidden_size = 32, patch_size = 2, num_heads = 4, input_size = 8,
                            num_classes = 10 })
        assert.are.equal(8, model.out_channels)
        assert.is_false(model.pos_embed.requires_grad)
        -- the zero-inits: the model's output is 0 at init
        local x = tide.randn(4, 4, 8, 8)
        local t = tide.randint(0, 1000, { 4 })
        local y = tide.randint(1, 11, { 4 })
        local out0 = model(x, t, y)
        assert.are.same({ 4, 8, 8, 8 }, { unpack(out0:size()) })
        assert.are.equal(0, out0:abs():sum():item())
        for _, block in ipairs(model.blocks) do
            assert.are.equal(0, block.adaLN_modulation[-1].weight:abs():sum():item())
        end

        -- unpatchify is the inverse of patchify: (N, T, p*p*C) -> (N, C, H, W)
        local imgs = tide.randn(2, 8, 8, 8)
        local patches = imgs:reshape(2, 8, 4, 2, 4, 2):permute(1, 3, 5, 4, 6, 2):reshape(2, 16, 32)
        assert.is_true(tide.equal(model:unpatchify(patches), imgs))

        -- token_drop: force_drop_ids == 1 -> the null class (the table's last row)
        local dropped = model.y_embedder:token_drop(tide.tensor({ 3, 4, 5 }), tide.tensor({ 1, 0, 1 }))
        assert.are.same({ 11, 4, 11 }, dropped:tolist())

        -- train.py: def update_ema(ema_model, model, decay=0.9999):
        local function update_ema(ema_model, model_, decay)
            decay = decay or 0.9999
            -- ema_params = OrderedDict(ema_model.named_parameters())
            -- (named_parameters() is a list of {name, p} that also reads by name)
            local ema_params = ema_model:named_parameters()
            local model_params = model_:named_parameters()
            -- for name, param in model_params.items():
            for _, item in ipairs(model_params) do
                local name, param = unpack(item)
                -- ema_params[name].mul_(decay).add_(param.data, alpha=1 - decay)
                ema_params[name]:mul_(decay):add_(param.data, { alpha = 1 - decay })
            end
        end

        -- def requires_grad(model, flag=True):
        local function requires_grad(model_, flag)
            if flag == nil then flag = true end
            for _, p in ipairs(model_:parameters()) do
                p.requires_grad = flag
            end
        end

        -- ema = deepcopy(model).to(device); requires_grad(ema, False)
        local ema = tide.deepcopy(model):to(tide.device("cpu"))
        requires_grad(ema, false)
        -- update_ema(ema, model, decay=0)  # Ensure EMA is initialized with synced weights
        update_ema(ema, model, 0)
        -- opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0)
        local opt = optim.AdamW(model:parameters(), { lr = 1e-3, weight_decay = 0 })
        -- train: loss = mse(model(x_t, t, y), noise) (diffusion.training_losses' "mse" term)
        local noise = tide.randn(4, 8, 8, 8)
        local first, last
        for _ = 1, 6 do
            model:train()
            local loss = F.mse_loss(model(x, t, y), noise)
            opt:zero_grad()
            loss:backward()
            opt:step()
            local before_ema = ema.final_layer.linear.bias:clone()
            update_ema(ema, model, 0.9)
            assert.is_true(tide.allclose(ema.final_layer.linear.bias,
                before_ema * 0.9 + model.final_layer.linear.bias.data * 0.1, { atol = 1e-6 }))
            first = first or loss:item()
            last = loss:item()
        end
        assert_finite(first)
        assert.is_true(last < first)

        -- sample.py: y_null = torch.tensor([1000] * n); y = torch.cat([y, y_null], 0); model.forward_with_cfg
        model:eval()
        local z = tide.randn(2, 4, 8, 8)
        z = tide.cat({ z, z }, 1)
        local y2 = tide.cat({ tide.tensor({ 2, 7 }), tide.tensor({ 11, 11 }) }, 1)
        local tt = tide.tensor({ 5, 5, 5, 5 })
        local cfg = model:forward_with_cfg(z, tt, y2, 4.0)
        assert.are.same({ 4, 8, 8, 8 }, { unpack(cfg:size()) })
        -- the guided channels 1..3 equal in both halves; rest is the model's own output
        assert.is_true(tide.equal(cfg[{ { 1, 2 }, { 1, 3 } }], cfg[{ { 3, 4 }, { 1, 3 } }]))
        local plain = model(z, tt, y2)
        assert.is_true(tide.allclose(cfg[{ {}, { 4, -1 } }], plain[{ {}, { 4, -1 } }]))
        local cond, uncond = plain[{ { 1, 2 }, { 1, 3 } }], plain[{ { 3, 4 }, { 1, 3 } }]
        assert.is_true(tide.allclose(cfg[{ { 1, 2 }, { 1, 3 } }], uncond + 4.0 * (cond - uncond), { atol = 1e-5 }))
    end)
end)
