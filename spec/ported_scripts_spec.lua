-- ported_scripts_spec.lua — real PyTorch training scripts ported line for line: pytorch/examples'
-- dcgan/main.py, word_language_model/model.py and main.py, mnist_rnn/main.py,
-- reinforcement_learning/actor_critic.py, super_resolution/model.py, and karpathy/nanoGPT's
-- model.py and train.py. Each port keeps the script's layers, positional arguments, F calls,
-- optimizers and schedulers, shrunk to tiny sizes and random data, and runs a few training
-- steps. The Python line stands above each Lua line that differs from it; a line tide cannot
-- write as Python does is marked `-- GAP:`. Dims, indices and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local init = nn.init
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

-- copies of every parameter's values, to see which ones a step moved
local function snapshot(model)
    local out = {}
    for i, p in ipairs(model:parameters()) do
        out[i] = p:detach():clone()
    end
    return out
end

local function all_moved(model, before, what)
    for i, p in ipairs(model:parameters()) do
        assert.is_false(tide.equal(p:detach(), before[i]), (what or "") .. " parameter " .. i)
    end
end

-- Python's isinstance(m, cls)
local isinstance = tide.isinstance

---------------------------------------------------------------------------------------------
-- 1. dcgan/main.py
---------------------------------------------------------------------------------------------
describe("dcgan/main.py", function()
    it("Generator, Discriminator, weights_init, BCELoss and Adam: one D and one G step", function()
        tide.backends.cudnn.benchmark = true
        tide.manual_seed(999)
        local device = tide.device("cpu")
        local nz, ngf, ndf, nc = 4, 2, 2, 3
        local imageSize, batchSize = 64, 2

        -- dataset = dset.FakeData(image_size=(3, opt.imageSize, opt.imageSize), ...)
        local dataset = tide.data.TensorDataset(tide.rand(4, nc, imageSize, imageSize):mul(2):sub(1),
            tide.zeros(4, { dtype = "int64" }))
        -- dataloader = torch.utils.data.DataLoader(dataset, batch_size=opt.batchSize,
        --                                          shuffle=True, num_workers=int(opt.workers))
        local dataloader = tide.data.DataLoader(dataset, { batch_size = batchSize, shuffle = true,
            num_workers = 2 })

        -- custom weights initialization called on netG and netD
        local visited = {}
        local function weights_init(m)
            -- classname = m.__class__.__name__
            local classname = m.__name
            visited[classname] = (visited[classname] or 0) + 1
            -- if classname.find('Conv') != -1:
            if classname:find("Conv") then
                init.normal_(m.weight, 0.0, 0.02)
            elseif classname:find("BatchNorm") then
                init.normal_(m.weight, 1.0, 0.02)
                init.zeros_(m.bias)
            end
        end

        local Generator = nn.Module:extend("Generator")
        function Generator:init(ngpu)
            self.ngpu = ngpu
            self.main = nn.Sequential(
            -- input is Z, going into a convolution
            -- nn.ConvTranspose2d(     nz, ngf * 8, 4, 1, 0, bias=False),
                nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, { bias = false }),
                nn.BatchNorm2d(ngf * 8),
                nn.ReLU(true),
                -- state size. (ngf*8) x 4 x 4
                nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, { bias = false }),
                nn.BatchNorm2d(ngf * 4),
                nn.ReLU(true),
                -- state size. (ngf*4) x 8 x 8
                nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, { bias = false }),
                nn.BatchNorm2d(ngf * 2),
                nn.ReLU(true),
                -- state size. (ngf*2) x 16 x 16
                nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, { bias = false }),
                nn.BatchNorm2d(ngf),
                nn.ReLU(true),
                -- state size. (ngf) x 32 x 32
                nn.ConvTranspose2d(ngf, nc, 4, 2, 1, { bias = false }),
                nn.Tanh()
            -- state size. (nc) x 64 x 64
            )
        end

        function Generator:forward(input)
            return self.main(input)
        end

        -- netG = Generator(ngpu).to(device)
        local netG = Generator(1):to(device)
        netG:apply(weights_init)

        local Discriminator = nn.Module:extend("Discriminator")
        function Discriminator:init(ngpu)
            self.ngpu = ngpu
            self.main = nn.Sequential(
            -- input is (nc) x 64 x 64
                nn.Conv2d(nc, ndf, 4, 2, 1, { bias = false }),
                -- nn.LeakyReLU(0.2, inplace=True),
                nn.LeakyReLU(0.2, { inplace = true }),
                -- state size. (ndf) x 32 x 32
                nn.Conv2d(ndf, ndf * 2, 4, 2, 1, { bias = false }),
                nn.BatchNorm2d(ndf * 2),
                nn.LeakyReLU(0.2, { inplace = true }),
                -- state size. (ndf*2) x 16 x 16
                nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, { bias = false }),
                nn.BatchNorm2d(ndf * 4),
                nn.LeakyReLU(0.2, { inplace = true }),
                -- state size. (ndf*4) x 8 x 8
                nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, { bias = false }),
                nn.BatchNorm2d(ndf * 8),
                nn.LeakyReLU(0.2, { inplace = true }),
                -- state size. (ndf*8) x 4 x 4
                nn.Conv2d(ndf * 8, 1, 4, 1, 0, { bias = false }),
                nn.Sigmoid()
            )
        end

        function Discriminator:forward(input)
            local output = self.main(input)
            -- return output.view(-1, 1).squeeze(1)
            return output:view(-1, 1):squeeze(2)
        end

        local netD = Discriminator(1):to(device)
        netD:apply(weights_init)
        assert.matches("ConvTranspose2d%(4, 16, kernel_size={4, 4}, stride={1, 1}, bias=false%)",
            tostring(netG))

        -- weights_init reached every layer: normal(0, 0.02) convs, normal(1, 0.02) norms
        assert.are.equal(5, visited.ConvTranspose2d)
        assert.are.equal(5, visited.Conv2d)
        assert.are.equal(7, visited.BatchNorm2d)
        local bn = netG.main[2]
        assert.are.equal(0, bn.bias:abs():max():item())
        assert(bn.weight:sub(1):abs():max():item() < 0.1, "BatchNorm weight near 1")
        assert(netD.main[1].weight:abs():max():item() < 0.1, "conv weight near 0")

        local criterion = nn.BCELoss()
        -- fixed_noise = torch.randn(opt.batchSize, nz, 1, 1, device=device)
        local fixed_noise = tide.randn(batchSize, nz, 1, 1, { device = device })
        local real_label = 1
        local fake_label = 0
        -- optimizerD = optim.Adam(netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
        local optimizerD = optim.Adam(netD:parameters(), { lr = 0.0002, betas = { 0.5, 0.999 } })
        local optimizerG = optim.Adam(netG:parameters(), { lr = 0.0002, betas = { 0.5, 0.999 } })

        local beforeD, beforeG = snapshot(netD), snapshot(netG)
        local steps = 0
        -- for i, data in enumerate(dataloader, 0):
        for real, _ in dataloader:iter() do
            -- (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
            netD:zero_grad()
            -- real_cpu = data[0].to(device)
            local real_cpu = real:to(device)
            -- batch_size = real_cpu.size(0)
            local batch_size = real_cpu:size(1)
            -- label = torch.full((batch_size,), real_label, dtype=real_cpu.dtype, device=device)
            local label = tide.full({ batch_size }, real_label, { dtype = real_cpu.dtype, device = device })
            local output = netD(real_cpu)
            local errD_real = criterion(output, label)
            errD_real:backward()
            local D_x = output:mean():item()

            -- train with fake
            local noise = tide.randn(batch_size, nz, 1, 1, { device = device })
            local fake = netG(noise)
            label:fill_(fake_label)
            local output_fake = netD(fake:detach())
            local errD_fake = criterion(output_fake, label)
            errD_fake:backward()
            local D_G_z1 = output_fake:mean():item()
            local errD = errD_real + errD_fake
            optimizerD:step()

            -- (2) Update G network: maximize log(D(G(z)))
            netG:zero_grad()
            label:fill_(real_label) -- fake labels are real for generator cost
            output = netD(fake)
            local errG = criterion(output, label)
            errG:backward()
            local D_G_z2 = output:mean():item()
            optimizerG:step()

            assert.are.same({ batch_size, nc, imageSize, imageSize }, fake.shape)
            assert.are.same({ batch_size }, output.shape)
            for _, v in ipairs({ errD:item(), errG:item(), D_x, D_G_z1, D_G_z2 }) do
                assert_finite(v, "dcgan")
            end
            assert(D_x > 0 and D_x < 1 and D_G_z2 > 0 and D_G_z2 < 1, "sigmoid outputs")
            steps = steps + 1
        end
        assert.are.equal(2, steps)
        all_moved(netD, beforeD, "netD")
        all_moved(netG, beforeG, "netG")
        -- fake = netG(fixed_noise)
        netG:eval()
        assert.are.same({ batchSize, nc, imageSize, imageSize }, netG(fixed_noise).shape)
        tide.backends.cudnn.benchmark = false
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. word_language_model/model.py and main.py
---------------------------------------------------------------------------------------------
local RNNModel = nn.Module:extend("RNNModel")

-- def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
function RNNModel:init(rnn_type, ntoken, ninp, nhid, nlayers, dropout, tie_weights)
    dropout = dropout or 0.5
    self.ntoken = ntoken
    self.drop = nn.Dropout(dropout)
    self.encoder = nn.Embedding(ntoken, ninp)
    if rnn_type == "LSTM" or rnn_type == "GRU" then
        -- self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.rnn = nn[rnn_type](ninp, nhid, nlayers, { dropout = dropout })
    else
        local nonlinearity = ({ RNN_TANH = "tanh", RNN_RELU = "relu" })[rnn_type]
        self.rnn = nn.RNN(ninp, nhid, nlayers, { nonlinearity = nonlinearity, dropout = dropout })
    end
    self.decoder = nn.Linear(nhid, ntoken)
    if tie_weights then
        assert(nhid == ninp, "When using the tied flag, nhid must be equal to emsize")
        self.decoder.weight = self.encoder.weight
    end
    self:init_weights()
    self.rnn_type = rnn_type
    self.nhid = nhid
    self.nlayers = nlayers
end

function RNNModel:init_weights()
    local initrange = 0.1
    init.uniform_(self.encoder.weight, -initrange, initrange)
    init.zeros_(self.decoder.bias)
    init.uniform_(self.decoder.weight, -initrange, initrange)
end

function RNNModel:forward(input, hidden)
    local emb = self.drop(self.encoder(input))
    local output
    output, hidden = self.rnn(emb, hidden)
    output = self.drop(output)
    local decoded = self.decoder(output)
    decoded = decoded:view(-1, self.ntoken)
    -- return F.log_softmax(decoded, dim=1), hidden
    return F.log_softmax(decoded, 2), hidden
end

function RNNModel:init_hidden(bsz)
    -- weight = next(self.parameters())
    local weight = self:parameters()[1]
    if self.rnn_type == "LSTM" then
        -- return (weight.new_zeros(self.nlayers, bsz, self.nhid),
        --         weight.new_zeros(self.nlayers, bsz, self.nhid))
        return { weight:new_zeros(self.nlayers, bsz, self.nhid),
            weight:new_zeros(self.nlayers, bsz, self.nhid) }
    end
    return weight:new_zeros(self.nlayers, bsz, self.nhid)
end

local PositionalEncoding = nn.Module:extend("PositionalEncoding")

function PositionalEncoding:init(d_model, dropout, max_len)
    dropout, max_len = dropout or 0.1, max_len or 5000
    -- self.dropout = nn.Dropout(p=dropout)
    self.dropout = nn.Dropout({ p = dropout })
    local pe = tide.zeros(max_len, d_model)
    -- position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
    local position = tide.arange(0, max_len, { dtype = "float32" }):unsqueeze(2)
    -- div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    local div_term = tide.exp(tide.arange(0, d_model, 2):float() * (-math.log(10000.0) / d_model))
    -- pe[:, 0::2] = torch.sin(position * div_term)
    pe[{ {}, { 1, -1, 2 } }] = tide.sin(position * div_term)
    -- pe[:, 1::2] = torch.cos(position * div_term)
    pe[{ {}, { 2, -1, 2 } }] = tide.cos(position * div_term)
    -- pe = pe.unsqueeze(0).transpose(0, 1)
    pe = pe:unsqueeze(1):transpose(1, 2)
    self:register_buffer("pe", pe)
end

function PositionalEncoding:forward(x)
    -- x = x + self.pe[:x.size(0), :]
    x = x + self.pe[{ { 1, x:size(1) }, {} }]
    return self.dropout(x)
end

-- class TransformerModel(nn.Transformer):
local TransformerModel = nn.Transformer:extend("TransformerModel")

function TransformerModel:init(ntoken, ninp, nhead, nhid, nlayers, dropout)
    dropout = dropout or 0.5
    -- super(TransformerModel, self).__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
    --                                        num_encoder_layers=nlayers)
    nn.Transformer.init(self, { d_model = ninp, nhead = nhead, dim_feedforward = nhid,
        num_encoder_layers = nlayers })
    self.model_type = "Transformer"
    self.src_mask = nil
    self.pos_encoder = PositionalEncoding(ninp, dropout)
    self.input_emb = nn.Embedding(ntoken, ninp)
    self.ninp = ninp
    self.decoder = nn.Linear(ninp, ntoken)
    self:init_weights()
end

function TransformerModel:_generate_square_subsequent_mask(sz)
    -- return torch.log(torch.tril(torch.ones(sz,sz)))
    return tide.log(tide.tril(tide.ones(sz, sz)))
end

function TransformerModel:init_weights()
    local initrange = 0.1
    init.uniform_(self.input_emb.weight, -initrange, initrange)
    init.zeros_(self.decoder.bias)
    init.uniform_(self.decoder.weight, -initrange, initrange)
end

function TransformerModel:forward(src, has_mask)
    if has_mask == nil then
        has_mask = true
    end
    if has_mask then
        local device = src.device
        -- if self.src_mask is None or self.src_mask.size(0) != len(src):
        if self.src_mask == nil or self.src_mask:size(1) ~= #src then
            local mask = self:_generate_square_subsequent_mask(#src):to(device)
            self.src_mask = mask
        end
    else
        self.src_mask = nil
    end
    src = self.input_emb(src) * math.sqrt(self.ninp)
    src = self.pos_encoder(src)
    -- output = self.encoder(src, mask=self.src_mask)
    local output = self.encoder(src, { mask = self.src_mask })
    output = self.decoder(output)
    -- return F.log_softmax(output, dim=-1)
    return F.log_softmax(output, -1)
end

-- main.py's data and training helpers
local function batchify(data, bsz, device)
    -- nbatch = data.size(0) // bsz
    local nbatch = math.floor(data:size(1) / bsz)
    -- data = data.narrow(0, 0, nbatch * bsz)
    data = data:narrow(1, 1, nbatch * bsz)
    data = data:view(bsz, -1):t():contiguous()
    return data:to(device)
end

-- Wraps hidden states in new Tensors, to detach them from their history.
local function repackage_hidden(h)
    -- if isinstance(h, torch.Tensor):
    if tide.is_tensor(h) then
        return h:detach()
    end
    -- return tuple(repackage_hidden(v) for v in h)
    local out = {}
    for i, v in ipairs(h) do
        out[i] = repackage_hidden(v)
    end
    return out
end

-- def get_batch(source, i): i is 0-based in Python, 1-based here
local function get_batch(source, i, bptt)
    -- seq_len = min(args.bptt, len(source) - 1 - i)
    local seq_len = math.min(bptt, #source - i)
    -- data = source[i:i+seq_len]
    local data = source[{ { i, i + seq_len - 1 } }]
    -- target = source[i+1:i+1+seq_len].view(-1)
    local target = source[{ { i + 1, i + seq_len } }]:view(-1)
    return data, target
end

describe("word_language_model", function()
    local device = tide.device("cpu")
    local ntokens, emsize, nhid, nlayers, bptt, batch_size, clip = 12, 8, 8, 2, 5, 3, 0.25
    local corpus_train = tide.randint(1, ntokens + 1, { 3 * 16 + 2 }) -- 1-based token ids

    it("RNNModel (LSTM, tied): batchify, repackage_hidden, clip_grad_norm_, manual SGD", function()
        tide.manual_seed(1)
        -- train_data = batchify(corpus.train, args.batch_size)
        local train_data = batchify(corpus_train, batch_size, device)
        assert.are.same({ 16, batch_size }, train_data.shape)
        -- model = RNNModel(args.model, ntokens, args.emsize, args.nhid, args.nlayers,
        --                  args.dropout, args.tied).to(device)
        local model = RNNModel("LSTM", ntokens, emsize, nhid, nlayers, 0.2, true):to(device)
        -- the other --model choices build and run too
        for _, rnn_type in ipairs({ "GRU", "RNN_TANH", "RNN_RELU" }) do
            local other = RNNModel(rnn_type, ntokens, emsize, nhid, nlayers, 0.2)
            local out, h = other(train_data[{ { 1, 5 } }], other:init_hidden(batch_size))
            assert.are.same({ 5 * batch_size, ntokens }, out.shape)
            assert.are.same({ nlayers, batch_size, nhid }, h.shape)
        end
        assert.are.equal("relu", RNNModel("RNN_RELU", ntokens, emsize, nhid, 1).rnn.nonlinearity)
        assert.are.equal(model.encoder.weight, model.decoder.weight)
        -- the tied weight is one parameter, as in PyTorch: 2 + 4 * nlayers + 1
        assert.are.equal(1 + 4 * nlayers + 1, #model:parameters())
        assert.are.same({ 4 * nhid }, model:state_dict()["rnn.bias_hh_l1"].shape)
        local criterion = nn.NLLLoss()
        local lr = 20

        -- def train():
        model:train()
        local total_loss = 0
        local hidden = model:init_hidden(batch_size)
        assert.are.same({ nlayers, batch_size, nhid }, hidden[1].shape)
        local before = snapshot(model)
        local losses = {}
        -- for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        for i = 1, train_data:size(1) - 1, bptt do
            local data, targets = get_batch(train_data, i, bptt)
            model:zero_grad()
            hidden = repackage_hidden(hidden)
            assert.is_nil(hidden[1].grad_fn)
            local output
            output, hidden = model(data, hidden)
            local loss = criterion(output, targets)
            loss:backward()
            -- torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            nn.utils.clip_grad_norm_(model:parameters(), clip)
            local norm2 = 0
            for _, p in ipairs(model:parameters()) do
                norm2 = norm2 + (p.grad * p.grad):sum():item()
            end
            assert(math.sqrt(norm2) <= clip * (1 + 1e-5), "gradients clipped to args.clip")
            for _, p in ipairs(model:parameters()) do
                -- p.data.add_(p.grad, alpha=-lr)
                p.data:add_(p.grad, { alpha = -lr })
            end
            total_loss = total_loss + loss:item()
            losses[#losses + 1] = loss:item()
            assert.are.same({ data:size(1) * batch_size, ntokens }, output.shape)
        end
        assert.are.equal(3, #losses) -- windows at 1, 6, 11 (Python's 0, 5, 10)
        for _, l in ipairs(losses) do
            assert_finite(l, "lstm loss")
        end
        assert_finite(total_loss, "total_loss")
        all_moved(model, before, "RNNModel")

        -- def evaluate(data_source): eval mode disables dropout
        model:eval()
        local function evaluate(data_source)
            local total = 0
            local h = model:init_hidden(batch_size)
            tide.no_grad(function()
                for i = 1, data_source:size(1) - 1, bptt do
                    local data, targets = get_batch(data_source, i, bptt)
                    local output
                    output, h = model(data, h)
                    h = repackage_hidden(h)
                    -- total_loss += len(data) * criterion(output, targets).item()
                    total = total + #data * criterion(output, targets):item()
                end
            end)
            return total / (#data_source - 1)
        end
        local v1, v2 = evaluate(train_data), evaluate(train_data)
        assert_finite(v1, "val loss")
        assert.are.equal(v1, v2) -- dropout off: the same values twice
        model:train()
        local x = get_batch(train_data, 1, bptt)
        local h0 = model:init_hidden(batch_size)
        assert.is_false(tide.equal((model(x, h0)), (model(x, h0)))) -- dropout on in training
    end)

    it("TransformerModel: PositionalEncoding's strided writes, the causal mask, AdamW", function()
        tide.manual_seed(2)
        -- PositionalEncoding's buffer against its definition
        local penc = PositionalEncoding(6, 0.1, 7)
        local pe = penc.pe
        assert.are.same({ 7, 1, 6 }, pe.shape)
        assert.are.same({ "pe" }, (function()
            local keys = {}
            for k in pairs(penc:state_dict()) do
                keys[#keys + 1] = k
            end
            return keys
        end)())
        for pos = 0, 6 do
            for i = 0, 2 do
                local angle = pos * math.exp(2 * i * (-math.log(10000.0) / 6))
                assert.is_true(math.abs(pe[pos + 1][1][2 * i + 1]:item() - math.sin(angle)) < 1e-5)
                assert.is_true(math.abs(pe[pos + 1][1][2 * i + 2]:item() - math.cos(angle)) < 1e-5)
            end
        end

        local train_data = batchify(corpus_train, batch_size, device)
        -- model = TransformerModel(ntokens, args.emsize, args.nhead, args.nhid, args.nlayers,
        --                          args.dropout).to(device)
        local model = TransformerModel(ntokens, emsize, 2, nhid, nlayers, 0.2):to(device)
        assert.are.equal("Linear", model.decoder.__name) -- the Linear replaced nn.Transformer's
        local criterion = nn.NLLLoss()
        -- optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
        local optimizer = optim.AdamW(model:parameters(), { lr = 0.01 })
        local mask = model:_generate_square_subsequent_mask(3)
        -- torch.log(torch.tril(torch.ones(3, 3)))
        assert.are.same({ { 0, -math.huge, -math.huge }, { 0, 0, -math.huge }, { 0, 0, 0 } },
            mask:totable())
        model:train()
        local losses = {}
        for i = 1, 11, bptt do
            local data, targets = get_batch(train_data, i, bptt)
            optimizer:zero_grad()
            local output = model(data)
            assert.are.same({ data:size(1), batch_size, ntokens }, output.shape)
            output = output:view(-1, ntokens)
            local loss = criterion(output, targets)
            loss:backward()
            nn.utils.clip_grad_norm_(model:parameters(), clip)
            optimizer:step()
            losses[#losses + 1] = loss:item()
        end
        assert.are.equal(3, #losses)
        for _, l in ipairs(losses) do
            assert_finite(l, "transformer loss")
        end
        -- the mask is built for the last window length and kept (not a buffer)
        assert.are.same({ 5, 5 }, model.src_mask.shape)
        assert.is_nil(model:state_dict().src_mask)
        -- the causal mask: position 1's output ignores later tokens
        model:eval()
        local data = get_batch(train_data, 1, bptt)
        local changed = data:clone()
        changed[{ { 2, 5 } }] = (changed[{ { 2, 5 } }] % ntokens) + 1
        local a, b = model(data), model(changed)
        assert.is_true(tide.allclose(a[1], b[1], 1e-5, 1e-6))
        assert.is_false(tide.allclose(a[2], b[2], 1e-5, 1e-6))
        assert.is_true(tide.equal(model(data), a)) -- eval: dropout leaves values unchanged
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. mnist_rnn/main.py
---------------------------------------------------------------------------------------------
describe("mnist_rnn/main.py", function()
    local Net = nn.Module:extend("Net")
    function Net:init()
        -- self.rnn = nn.LSTM(input_size=28, hidden_size=64, batch_first=True)
        self.rnn = nn.LSTM({ input_size = 28, hidden_size = 64, batch_first = true })
        self.batchnorm = nn.BatchNorm1d(64)
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout2d(0.5)
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)
    end

    function Net:forward(input)
        -- Shape of input is (batch_size,1, 28, 28)
        input = input:reshape(-1, 28, 28)
        local output, hidden = self.rnn(input) -- luacheck: ignore hidden
        -- output = output[:, -1, :]
        output = output[{ {}, -1, {} }]
        output = self.batchnorm(output)
        output = self.dropout1(output)
        output = self.fc1(output)
        output = F.relu(output)
        output = self.dropout2(output)
        output = self.fc2(output)
        -- output = F.log_softmax(output, dim=1)
        output = F.log_softmax(output, 2)
        return output
    end

    it("LSTM(batch_first), Dropout2d on {N, C}, nll_loss, Adadelta and StepLR", function()
        tide.manual_seed(1)
        local device = tide.device("cpu")
        local gamma, lr = 0.7, 0.1
        -- datasets.MNIST: 8 random 1x28x28 images, 1-based labels
        local images = tide.randn(8, 1, 28, 28)
        local labels = tide.randint(1, 11, { 8 })
        local ds = tide.data.TensorDataset(images, labels)
        -- train_loader = torch.utils.data.DataLoader(..., batch_size=args.batch_size,
        --                                            shuffle=True, **kwargs)
        local train_loader = tide.data.DataLoader(ds, { batch_size = 4, shuffle = true,
            num_workers = 1, pin_memory = true })
        local test_loader = tide.data.DataLoader(ds, { batch_size = 8, shuffle = true })
        local model = Net():to(device)
        -- optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
        local optimizer = optim.Adadelta(model:parameters(), { lr = lr })
        -- scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
        local scheduler = optim.lr_scheduler.StepLR(optimizer, { step_size = 1, gamma = gamma })

        local function train(epoch)
            model:train()
            local losses = {}
            -- for batch_idx, (data, target) in enumerate(train_loader):
            for data, target in train_loader:iter() do
                -- data, target = data.to(device), target.to(device)
                data, target = data:to(device), target:to(device)
                optimizer:zero_grad()
                local output = model(data)
                assert.are.same({ 4, 10 }, output.shape)
                local loss = F.nll_loss(output, target)
                loss:backward()
                optimizer:step()
                losses[#losses + 1] = loss:item()
            end
            return losses
        end

        local function test()
            model:eval()
            local test_loss, correct = 0, 0
            tide.no_grad(function()
                for data, target in test_loader:iter() do
                    local output = model(data)
                    -- test_loss += F.nll_loss(output, target, reduction='sum').item()
                    test_loss = test_loss + F.nll_loss(output, target, { reduction = "sum" }):item()
                    -- pred = output.argmax(dim=1, keepdim=True)
                    local pred = output:argmax(2, true)
                    -- correct += pred.eq(target.view_as(pred)).sum().item()
                    correct = correct + pred:eq(target:view_as(pred)):sum():item()
                end
            end)
            -- test_loss /= len(test_loader.dataset)
            -- GAP: #test_loader.dataset is 0 on Lua 5.1 and LuaJIT (no __len for tables), which
            -- made test_loss inf there; :len() counts on every host
            return test_loss / test_loader.dataset:len(), correct
        end

        local before = snapshot(model)
        -- for epoch in range(1, args.epochs + 1):
        for epoch = 1, 2 do
            local losses = train(epoch)
            assert.are.equal(2, #losses)
            for _, l in ipairs(losses) do
                assert_finite(l, "nll_loss")
            end
            local test_loss, correct = test()
            assert_finite(test_loss, "test_loss")
            assert.is_true(correct >= 0 and correct <= 8)
            -- eval mode: Dropout2d off, so test() gives the same numbers again
            local again, correct2 = test()
            assert.are.equal(test_loss, again)
            assert.are.equal(correct, correct2)
            scheduler:step()
            -- StepLR(step_size=1, gamma=0.7): lr * 0.7 ** epoch
            assert.is_true(math.abs(optimizer.param_groups[1].lr - lr * gamma ^ epoch) < 1e-12)
        end
        all_moved(model, before, "mnist_rnn")
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. reinforcement_learning/actor_critic.py
---------------------------------------------------------------------------------------------
describe("reinforcement_learning/actor_critic.py", function()
    it("Policy, select_action with Categorical(probs), finish_episode", function()
        tide.manual_seed(543)
        local gamma = 0.99
        local Categorical = tide.distributions.Categorical

        local Policy = nn.Module:extend("Policy")
        function Policy:init()
            self.affine1 = nn.Linear(4, 128)
            -- actor's layer
            self.action_head = nn.Linear(128, 2)
            -- critic's layer
            self.value_head = nn.Linear(128, 1)
            -- action & reward buffer
            self.saved_actions = {}
            self.rewards = {}
        end

        function Policy:forward(x)
            x = F.relu(self.affine1(x))
            -- action_prob = F.softmax(self.action_head(x), dim=-1)
            local action_prob = F.softmax(self.action_head(x), -1)
            local state_values = self.value_head(x)
            return action_prob, state_values
        end

        local model = Policy()
        -- optimizer = optim.Adam(model.parameters(), lr=3e-2)
        local optimizer = optim.Adam(model:parameters(), { lr = 3e-2 })
        -- eps = np.finfo(np.float32).eps.item()
        local eps = tide.finfo("float32").eps
        assert.are.equal(2 ^ -23, eps)

        local function select_action(state)
            -- state = torch.from_numpy(state).float()
            state = tide.tensor(state):float()
            local probs, state_value = model(state)
            -- m = Categorical(probs)
            local m = Categorical(probs)
            local action = m:sample()
            -- model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
            table.insert(model.saved_actions, { log_prob = m:log_prob(action), value = state_value })
            return action:item()
        end

        local function finish_episode()
            local R = 0
            local saved_actions = model.saved_actions
            local policy_losses = {}
            local value_losses = {}
            local returns = {}
            -- for r in model.rewards[::-1]:
            for i = #model.rewards, 1, -1 do
                local r = model.rewards[i]
                R = r + gamma * R
                -- returns.insert(0, R)
                table.insert(returns, 1, R)
            end
            returns = tide.tensor(returns)
            returns = (returns - returns:mean()) / (returns:std() + eps)
            -- for (log_prob, value), R in zip(saved_actions, returns):
            for i, saved in ipairs(saved_actions) do
                local log_prob, value = saved.log_prob, saved.value
                R = returns[i]
                local advantage = R - value:item()
                -- policy_losses.append(-log_prob * advantage)
                table.insert(policy_losses, -log_prob * advantage)
                -- value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
                table.insert(value_losses, F.smooth_l1_loss(value, tide.tensor({ R })))
            end
            optimizer:zero_grad()
            -- loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
            local loss = tide.stack(policy_losses):sum() + tide.stack(value_losses):sum()
            loss:backward()
            optimizer:step()
            -- del model.rewards[:]; del model.saved_actions[:]
            model.rewards = {}
            model.saved_actions = {}
            return loss, returns
        end

        -- a stand-in for CartPole: random states, reward 1 a step, episodes of 6 steps
        local before = snapshot(model)
        for _ = 1, 2 do
            local state = { 0.01, -0.02, 0.03, 0.0 }
            for _ = 1, 6 do
                local action = select_action(state)
                assert.is_true(action == 1 or action == 2) -- 1-based action
                state = tide.randn(4):mul(0.05):totable()
                table.insert(model.rewards, 1.0)
            end
            assert.are.equal(6, #model.saved_actions)
            local loss, returns = finish_episode()
            assert_finite(loss:item(), "actor-critic loss")
            -- the normalized returns: mean 0, std 1
            assert.is_true(math.abs(returns:mean():item()) < 1e-5)
            assert.is_true(math.abs(returns:std():item() - 1) < 1e-4)
            assert.are.same({}, model.rewards)
            assert.are.same({}, model.saved_actions)
        end
        all_moved(model, before, "Policy")
    end)
end)

---------------------------------------------------------------------------------------------
-- 5. super_resolution/model.py
---------------------------------------------------------------------------------------------
describe("super_resolution/model.py", function()
    it("Conv2d with size tuples, PixelShuffle, orthogonal_ with calculate_gain('relu')", function()
        tide.manual_seed(123)
        local Net = nn.Module:extend("Net")
        function Net:init(upscale_factor)
            self.relu = nn.ReLU()
            -- self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
            self.conv1 = nn.Conv2d(1, 64, { 5, 5 }, { 1, 1 }, { 2, 2 })
            self.conv2 = nn.Conv2d(64, 64, { 3, 3 }, { 1, 1 }, { 1, 1 })
            self.conv3 = nn.Conv2d(64, 32, { 3, 3 }, { 1, 1 }, { 1, 1 })
            -- self.conv4 = nn.Conv2d(32, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
            -- (Lua's ^ makes a float, 4.0 in Lua 5.3+: a size takes it as the integer 4)
            self.conv4 = nn.Conv2d(32, upscale_factor ^ 2, { 3, 3 }, { 1, 1 }, { 1, 1 })
            self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
            self:_initialize_weights()
        end

        function Net:forward(x)
            x = self.relu(self.conv1(x))
            x = self.relu(self.conv2(x))
            x = self.relu(self.conv3(x))
            x = self.pixel_shuffle(self.conv4(x))
            return x
        end

        function Net:_initialize_weights()
            -- init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
            init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
            init.orthogonal_(self.conv2.weight, init.calculate_gain("relu"))
            init.orthogonal_(self.conv3.weight, init.calculate_gain("relu"))
            init.orthogonal_(self.conv4.weight)
        end

        local upscale_factor = 2
        local model = Net(upscale_factor)
        assert.are.same({ 4, 32, 3, 3 }, model.conv4.weight.shape)
        -- orthogonal_ with gain sqrt(2): conv1's 64 x 25 weight has W^T W = 2 I
        assert.are.equal(math.sqrt(2), init.calculate_gain("relu"))
        local w = model.conv1.weight:view(64, -1)
        assert.is_true(tide.allclose(w:t():matmul(w), tide.eye(25) * 2, 1e-4, 1e-4))
        -- conv4's 4 x 288 weight: orthonormal rows, gain 1
        local w4 = model.conv4.weight:view(4, -1)
        assert.is_true(tide.allclose(w4:matmul(w4:t()), tide.eye(4), 1e-4, 1e-4))

        -- main.py: criterion = nn.MSELoss(); optimizer = optim.Adam(model.parameters(), lr=opt.lr)
        local criterion = nn.MSELoss()
        local optimizer = optim.Adam(model:parameters(), { lr = 0.001 })
        local input, target = tide.rand(2, 1, 8, 8), tide.rand(2, 1, 16, 16)
        local losses = {}
        for _ = 1, 3 do
            optimizer:zero_grad()
            local loss = criterion(model(input), target)
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
        end
        assert.are.same({ 2, 1, 16, 16 }, model(input).shape)
        for _, l in ipairs(losses) do
            assert_finite(l, "mse")
        end
        assert.is_true(losses[3] < losses[1])
        -- psnr = 10 * log10(1 / mse.item())
        local prediction = tide.no_grad(function() return model(input) end)
        local mse = criterion(prediction, target)
        local psnr = 10 * (math.log(1 / mse:item()) / math.log(10)) -- math.log10: not in every Lua
        assert_finite(psnr, "psnr")
    end)
end)

---------------------------------------------------------------------------------------------
-- 6. nanoGPT model.py and train.py
---------------------------------------------------------------------------------------------
-- LayerNorm but with an optional bias. PyTorch doesn't support simply bias=False
local LayerNorm = nn.Module:extend("LayerNorm")
function LayerNorm:init(ndim, bias)
    -- self.weight = nn.Parameter(torch.ones(ndim))
    self.weight = nn.Parameter(tide.ones(ndim))
    -- self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None
    self.bias = bias and nn.Parameter(tide.zeros(ndim)) or nil
end

function LayerNorm:forward(input)
    return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)
end

local CausalSelfAttention = nn.Module:extend("CausalSelfAttention")
function CausalSelfAttention:init(config, flash)
    assert(config.n_embd % config.n_head == 0)
    -- key, query, value projections for all heads, but in a batch
    -- self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
    self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, { bias = config.bias })
    self.c_proj = nn.Linear(config.n_embd, config.n_embd, { bias = config.bias })
    self.attn_dropout = nn.Dropout(config.dropout)
    self.resid_dropout = nn.Dropout(config.dropout)
    self.n_head = config.n_head
    self.n_embd = config.n_embd
    self.dropout = config.dropout
    -- self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')
    self.flash = F.scaled_dot_product_attention ~= nil and flash ~= false
    if not self.flash then
        -- self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
        --                             .view(1, 1, config.block_size, config.block_size))
        self:register_buffer("bias", tide.tril(tide.ones(config.block_size, config.block_size))
            :view(1, 1, config.block_size, config.block_size))
    end
end

function CausalSelfAttention:forward(x)
    -- B, T, C = x.size()
    local B, T, C = unpack(x:size())
    -- q, k, v  = self.c_attn(x).split(self.n_embd, dim=2)
    -- GAP: split returns a Lua list (tide's documented convention), so the tuple needs unpack;
    -- written as Python's, k is nil: "attempt to index a nil value (local 'k')"
    local q, k, v = unpack(self.c_attn(x):split(self.n_embd, 3))
    -- k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
    local hs = math.floor(C / self.n_head)
    k = k:view(B, T, self.n_head, hs):transpose(2, 3)
    q = q:view(B, T, self.n_head, hs):transpose(2, 3)
    v = v:view(B, T, self.n_head, hs):transpose(2, 3)
    local y
    if self.flash then
        -- y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=None,
        --     dropout_p=self.dropout if self.training else 0, is_causal=True)
        y = F.scaled_dot_product_attention(q, k, v, { attn_mask = nil,
            dropout_p = self.training and self.dropout or 0, is_causal = true })
    else
        -- att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        local att = q:matmul(k:transpose(-2, -1)) * (1.0 / math.sqrt(k:size(-1)))
        -- att = att.masked_fill(self.bias[:,:,:T,:T] == 0, float('-inf'))
        -- GAP: Lua's == on a tensor and a number is false (Lua calls no __eq there), so written as
        -- Python's it raises "tide: masked_fill: mask must be a bool tensor, got boolean"; :eq(0)
        att = att:masked_fill(self.bias[{ {}, {}, { 1, T }, { 1, T } }]:eq(0), -math.huge)
        att = F.softmax(att, -1)
        att = self.attn_dropout(att)
        -- y = att @ v
        y = att:matmul(v)
    end
    -- y = y.transpose(1, 2).contiguous().view(B, T, C)
    y = y:transpose(2, 3):contiguous():view(B, T, C)
    y = self.resid_dropout(self.c_proj(y))
    return y
end

local MLP = nn.Module:extend("MLP")
function MLP:init(config)
    self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, { bias = config.bias })
    self.gelu = nn.GELU()
    self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, { bias = config.bias })
    self.dropout = nn.Dropout(config.dropout)
end

function MLP:forward(x)
    x = self.c_fc(x)
    x = self.gelu(x)
    x = self.c_proj(x)
    x = self.dropout(x)
    return x
end

local Block = nn.Module:extend("Block")
function Block:init(config)
    -- self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
    self.ln_1 = LayerNorm(config.n_embd, config.bias)
    self.attn = CausalSelfAttention(config, config.flash)
    self.ln_2 = LayerNorm(config.n_embd, config.bias)
    self.mlp = MLP(config)
end

function Block:forward(x)
    x = x + self.attn(self.ln_1(x))
    x = x + self.mlp(self.ln_2(x))
    return x
end

-- @dataclass class GPTConfig: the defaults
local function GPTConfig(args)
    local config = { block_size = 1024, vocab_size = 50304, n_layer = 12, n_head = 12,
        n_embd = 768, dropout = 0.0, bias = true }
    for k, v in pairs(args) do
        config[k] = v
    end
    return config
end

local GPT = nn.Module:extend("GPT")
function GPT:init(config)
    assert(config.vocab_size ~= nil)
    assert(config.block_size ~= nil)
    self.config = config
    local h = {}
    for i = 1, config.n_layer do
        h[i] = Block(config)
    end
    -- self.transformer = nn.ModuleDict(dict(wte = ..., wpe = ..., drop = ..., h = ..., ln_f = ...))
    -- ({name, module} pairs keep Python's dict order; a {name = module} table sorts the names)
    self.transformer = nn.ModuleDict({
        { "wte",  nn.Embedding(config.vocab_size, config.n_embd) },
        { "wpe",  nn.Embedding(config.block_size, config.n_embd) },
        { "drop", nn.Dropout(config.dropout) },
        { "h",    nn.ModuleList(h) },
        { "ln_f", LayerNorm(config.n_embd, config.bias) },
    })
    -- self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
    self.lm_head = nn.Linear(config.n_embd, config.vocab_size, { bias = false })
    self.transformer.wte.weight = self.lm_head.weight -- weight tying
    -- self.apply(self._init_weights)
    self:apply(function(module) return self:_init_weights(module) end)
    -- for pn, p in self.named_parameters():
    -- (ipairs over {name, p} pairs: Lua 5.1 has no __pairs)
    for _, np in ipairs(self:named_parameters()) do
        local pn, p = np[1], np[2]
        -- if pn.endswith('c_proj.weight'):
        if pn:sub(-#"c_proj.weight") == "c_proj.weight" then
            -- torch.nn.init.normal_(p, mean=0.0, std=0.02/math.sqrt(2 * config.n_layer))
            init.normal_(p, { mean = 0.0, std = 0.02 / math.sqrt(2 * config.n_layer) })
        end
    end
end

function GPT:get_num_params(non_embedding)
    if non_embedding == nil then
        non_embedding = true
    end
    local n_params = 0
    for _, p in ipairs(self:parameters()) do
        n_params = n_params + p:numel()
    end
    if non_embedding then
        n_params = n_params - self.transformer.wpe.weight:numel()
    end
    return n_params
end

function GPT:_init_weights(module)
    -- if isinstance(module, nn.Linear):
    -- GAP: tide has no isinstance for modules; the local helper walks the metatables
    if isinstance(module, nn.Linear) then
        -- torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
        init.normal_(module.weight, { mean = 0.0, std = 0.02 })
        if module.bias ~= nil then
            init.zeros_(module.bias)
        end
    elseif isinstance(module, nn.Embedding) then
        init.normal_(module.weight, { mean = 0.0, std = 0.02 })
    end
end

function GPT:forward(idx, targets)
    local device = idx.device
    -- b, t = idx.size()
    local _, t = unpack(idx:size())
    assert(t <= self.config.block_size)
    -- pos = torch.arange(0, t, dtype=torch.long, device=device) # shape (t): 1-based positions
    local pos = tide.arange(1, t + 1, { dtype = "int64", device = device })
    local tok_emb = self.transformer.wte(idx)
    local pos_emb = self.transformer.wpe(pos)
    local x = self.transformer.drop(tok_emb + pos_emb)
    -- for block in self.transformer.h:
    for _, block in ipairs(self.transformer.h) do
        x = block(x)
    end
    x = self.transformer.ln_f(x)
    local logits, loss
    if targets ~= nil then
        logits = self.lm_head(x)
        -- loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
        --                        ignore_index=-1)
        loss = F.cross_entropy(logits:view(-1, logits:size(-1)), targets:view(-1),
            { ignore_index = -1 })
    else
        -- logits = self.lm_head(x[:, [-1], :])
        logits = self.lm_head(x[{ {}, { -1 }, {} }])
    end
    return logits, loss
end

function GPT:configure_optimizers(weight_decay, learning_rate, betas, device_type)
    -- param_dict = {pn: p for pn, p in self.named_parameters()}, in order
    local param_dict = {}
    for _, np in ipairs(self:named_parameters()) do
        -- param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
        if np[2].requires_grad then
            param_dict[#param_dict + 1] = np
        end
    end
    -- decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
    local decay_params, nodecay_params = {}, {}
    for _, np in ipairs(param_dict) do
        if np[2]:dim() >= 2 then
            decay_params[#decay_params + 1] = np[2]
        else
            nodecay_params[#nodecay_params + 1] = np[2]
        end
    end
    local optim_groups = {
        { params = decay_params,   weight_decay = weight_decay },
        { params = nodecay_params, weight_decay = 0.0 },
    }
    local use_fused = device_type == "cuda"
    -- extra_args = dict(fused=True) if use_fused else dict()
    local extra_args = use_fused and { fused = true } or {}
    -- optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
    extra_args.lr, extra_args.betas = learning_rate, betas
    local optimizer = optim.AdamW(optim_groups, extra_args)
    return optimizer, #decay_params, #nodecay_params
end

describe("nanoGPT model.py and train.py", function()
    local n_layer, n_head, n_embd, block_size, bias, dropout = 1, 2, 8, 8, true, 0.0
    local batch_size, vocab_size = 2, 16
    local learning_rate, weight_decay, beta1, beta2, grad_clip = 6e-4, 1e-1, 0.9, 0.95, 1.0
    local warmup_iters, lr_decay_iters, min_lr = 2, 10, 6e-5
    local device, device_type = tide.device("cpu"), "cpu"
    local data = tide.randint(1, vocab_size + 1, { 64 }) -- train.bin's tokens, 1-based

    -- def get_batch(split):
    local function get_batch()
        -- ix = torch.randint(len(data) - block_size, (batch_size,))
        local ix = tide.randint(#data - block_size, { batch_size })
        local xs, ys = {}, {}
        for j = 1, batch_size do
            local i = ix[j]:item()
            -- x = torch.stack([torch.from_numpy((data[i:i+block_size]).astype(np.int64)) ...])
            xs[j] = data[{ { i + 1, i + block_size } }]
            -- y = torch.stack([... data[i+1:i+1+block_size] ...])
            ys[j] = data[{ { i + 2, i + 1 + block_size } }]
        end
        local x, y = tide.stack(xs), tide.stack(ys)
        return x:to(device), y:to(device)
    end

    -- learning rate decay scheduler (cosine with warmup)
    local function get_lr(it)
        if it < warmup_iters then
            return learning_rate * (it + 1) / (warmup_iters + 1)
        end
        if it > lr_decay_iters then
            return min_lr
        end
        local decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
        assert(0 <= decay_ratio and decay_ratio <= 1)
        local coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
        return min_lr + coeff * (learning_rate - min_lr)
    end

    local function train_step(model, optimizer, scaler, iter_num, X, Y)
        local lr = get_lr(iter_num)
        -- for param_group in optimizer.param_groups: param_group['lr'] = lr
        for _, param_group in ipairs(optimizer.param_groups) do
            param_group.lr = lr
        end
        local _, loss = model(X, Y)
        -- scaler.scale(loss).backward()
        scaler:scale(loss):backward()
        if grad_clip ~= 0.0 then
            scaler:unscale_(optimizer)
            -- torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            nn.utils.clip_grad_norm_(model:parameters(), grad_clip)
        end
        scaler:step(optimizer)
        scaler:update()
        -- optimizer.zero_grad(set_to_none=True)
        optimizer:zero_grad({ set_to_none = true })
        return loss:item()
    end

    it("the flash path equals the manual masked-softmax path", function()
        tide.manual_seed(3)
        local config = GPTConfig({ n_embd = n_embd, n_head = n_head, block_size = block_size,
            dropout = 0.0, bias = true })
        local flash = CausalSelfAttention(config)
        local manual = CausalSelfAttention(config, false)
        assert.is_true(flash.flash)
        assert.is_false(manual.flash)
        manual:load_state_dict(flash:state_dict(), false)
        local x = tide.randn(2, 5, n_embd)
        assert.is_true(tide.allclose(flash(x), manual(x), 1e-5, 1e-6))
        -- LayerNorm(ndim, bias=False) has no bias parameter
        assert.are.equal(1, #LayerNorm(4, false):parameters())
    end)

    it("GPT: tied weights, param groups, AdamW, tide.compile, a checkpoint that resumes", function()
        tide.manual_seed(1337)
        local iter_num = 0
        local best_val_loss = 1e9
        -- model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size,
        --                   bias=bias, vocab_size=None, dropout=dropout)
        local model_args = { n_layer = n_layer, n_head = n_head, n_embd = n_embd,
            block_size = block_size, bias = bias, vocab_size = nil, dropout = dropout }
        local config = { learning_rate = learning_rate, batch_size = batch_size,
            compile = true, dataset = "random" }
        model_args.vocab_size = vocab_size
        -- gptconf = GPTConfig(**model_args)
        local gptconf = GPTConfig(model_args)
        local model = GPT(gptconf)
        model:to(device)

        -- weight tying: one tensor, counted once
        assert.are.equal(model.transformer.wte.weight, model.lm_head.weight)
        local names = {}
        for _, np in ipairs(model:named_parameters()) do
            names[#names + 1] = np[1]
        end
        assert.are.equal("transformer.wte.weight", names[1])
        assert.are.equal("transformer.h.1.attn.c_attn.weight", names[5])
        -- wte 16*8 (tied lm_head), wpe 8*8 off; block: 2 LayerNorms, attn 8*24+24 + 8*8+8,
        -- MLP 8*32+32 + 32*8+8; ln_f 16
        assert.are.equal(16 * 8 + 2 * 16 + (8 * 24 + 24 + 64 + 8) + (8 * 32 + 32 + 32 * 8 + 8) + 16,
            model:get_num_params())
        -- the scaled init of the residual projections: std 0.02 / sqrt(2 * n_layer), 0.02 elsewhere
        local proj_std = model.transformer.h[1].mlp.c_proj.weight:std():item()
        local fc_std = model.transformer.h[1].mlp.c_fc.weight:std():item()
        assert.is_true(proj_std > 0.011 and proj_std < 0.017, "c_proj std " .. proj_std)
        assert.is_true(fc_std > 0.017 and fc_std < 0.023, "c_fc std " .. fc_std)

        -- scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
        local scaler = tide.cuda.amp.GradScaler({ enabled = false })
        -- optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2),
        --                                        device_type)
        local optimizer, ndecay, nnodecay = model:configure_optimizers(weight_decay, learning_rate,
            { beta1, beta2 }, device_type)
        -- decayed: wte, wpe, c_attn, c_proj, c_fc, c_proj; not: 3 LayerNorms' 6, 4 Linear biases
        assert.are.same({ 6, 10 }, { ndecay, nnodecay })
        assert.are.equal(weight_decay, optimizer.param_groups[1].weight_decay)
        assert.are.equal(0.0, optimizer.param_groups[2].weight_decay)
        assert.are.same({ 0.9, 0.95 }, optimizer.param_groups[1].betas)
        -- the fused form runs too: AdamW(optim_groups, lr=..., betas=..., fused=True)
        assert.is_not_nil(optim.AdamW(model:parameters(), { lr = learning_rate,
            betas = { beta1, beta2 }, fused = true }))

        -- unoptimized_model = model; model = torch.compile(model)
        local unoptimized_model = model
        model = tide.compile(model)
        assert.are.equal(unoptimized_model, model)
        local raw_model = model

        -- @torch.no_grad() def estimate_loss():
        local function estimate_loss()
            local out = {}
            model:eval()
            tide.no_grad(function()
                for _, split in ipairs({ "train", "val" }) do
                    local losses = tide.zeros(2)
                    for k = 1, 2 do
                        local X, Y = get_batch(split)
                        local _, loss = model(X, Y)
                        losses[k] = loss:item()
                    end
                    out[split] = losses:mean()
                end
            end)
            model:train()
            return out
        end

        local X, Y = get_batch("train")
        local logits, first = model(X, Y)
        assert.are.same({ batch_size, block_size, vocab_size }, logits.shape)
        -- about log(vocab_size) at init
        assert.is_true(math.abs(first:item() - math.log(vocab_size)) < 0.2)
        local no_targets = model(X)
        assert.are.same({ batch_size, 1, vocab_size }, no_targets.shape)

        local ckpt_path = os.tmpname()
        local eval_interval, always_save_checkpoint = 2, true
        local function as_number(x)
            return tide.is_tensor(x) and x:item() or x
        end
        local losses_seen = {}
        while iter_num < 3 do
            -- if iter_num % eval_interval == 0 and master_process:
            if iter_num % eval_interval == 0 then
                local losses = estimate_loss()
                assert_finite(losses.val:item(), "val loss")
                -- if losses['val'] < best_val_loss or always_save_checkpoint:
                -- (Lua 5.3+ compares a one-element tensor with a number as Python does; Lua 5.1
                -- and LuaJIT call no __lt for a tensor and a number, so this port, which runs
                -- on every Lua, compares the numbers)
                if losses.val:item() < as_number(best_val_loss) or always_save_checkpoint then
                    best_val_loss = losses.val
                end
            end
            if iter_num % eval_interval == 0 and iter_num > 0 then
                local checkpoint = {
                    model = raw_model:state_dict(),
                    optimizer = optimizer:state_dict(),
                    model_args = model_args,
                    iter_num = iter_num,
                    best_val_loss = best_val_loss,
                    config = config,
                }
                -- torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))
                tide.save(ckpt_path, checkpoint)
                break
            end
            losses_seen[#losses_seen + 1] = train_step(model, optimizer, scaler, iter_num, X, Y)
            X, Y = get_batch("train")
            iter_num = iter_num + 1
        end
        assert.are.equal(2, #losses_seen)
        for _, l in ipairs(losses_seen) do
            assert_finite(l, "gpt loss")
        end

        -- init_from == 'resume'
        -- checkpoint = torch.load(ckpt_path, map_location=device)
        local checkpoint = tide.load(ckpt_path, { map_location = device })
        os.remove(ckpt_path)
        local checkpoint_model_args = checkpoint.model_args
        local resumed_args = { dropout = dropout }
        for _, k in ipairs({ "n_layer", "n_head", "n_embd", "block_size", "bias", "vocab_size" }) do
            resumed_args[k] = checkpoint_model_args[k]
        end
        assert.are.same(model_args, resumed_args)
        local model2 = GPT(GPTConfig(resumed_args))
        local state_dict = checkpoint.model
        -- fix the keys of the state dictionary
        local unwanted_prefix = "_orig_mod."
        local keys = {}
        for k in pairs(state_dict) do
            keys[#keys + 1] = k
        end
        for _, k in ipairs(keys) do
            if k:sub(1, #unwanted_prefix) == unwanted_prefix then
                state_dict[k:sub(#unwanted_prefix + 1)] = state_dict[k]
                state_dict[k] = nil
            end
        end
        model2:load_state_dict(state_dict)
        -- the tied weight's two names come back as one tensor, as torch.load keeps the storage
        -- shared (tide.save writes a view of one place, shape and strides once)
        assert.is_true(rawequal(state_dict["transformer.wte.weight"], state_dict["lm_head.weight"]))
        -- the new model stays tied
        assert.are.equal(model2.transformer.wte.weight, model2.lm_head.weight)
        local iter_num2 = checkpoint.iter_num
        local best_val_loss2 = checkpoint.best_val_loss
        assert.are.equal(2, iter_num2)
        assert.is_true(math.type == nil or math.type(iter_num2) == "integer")
        assert.are.equal(best_val_loss:item(), best_val_loss2:item())
        assert.are.same(config, checkpoint.config)
        local optimizer2 = model2:configure_optimizers(weight_decay, learning_rate, { beta1, beta2 },
            device_type)
        optimizer2:load_state_dict(checkpoint.optimizer)
        checkpoint = nil -- luacheck: ignore (free up memory)
        model2 = tide.compile(model2)

        -- the next step, from the run and from the checkpoint, is the same step
        local l1 = train_step(model, optimizer, scaler, iter_num, X, Y)
        local l2 = train_step(model2, optimizer2, tide.amp.GradScaler({ enabled = false }),
            iter_num2, X, Y)
        assert.are.equal(l1, l2)
        local p1, p2 = model:parameters(), model2:parameters()
        assert.are.equal(#p1, #p2)
        for i = 1, #p1 do
            assert.is_true(tide.equal(p1[i], p2[i]), "parameter " .. i)
        end
        assert.are.equal(optimizer.param_groups[1].lr, optimizer2.param_groups[1].lr)
    end)
end)
