-- ported_scripts33_spec.lua — rosinality's vq-vae-2-pytorch vqvae.py (Quantize with its EMA
-- codebook buffers, ResBlock, Encoder, Decoder, the two-level VQVAE with encode/decode/
-- decode_code, trained a few steps as train_vqvae.py does) and jzbontar's pixelcnn-pytorch main.py
-- (MaskedConv2d types 'A'/'B' with the mask as a buffer, the nn.Sequential net, training with
-- F.cross_entropy over the levels, and the pixel-by-pixel sampling loop), ported line for line.
-- The Python line stands above each Lua line that differs from it. Dims and indices are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

---------------------------------------------------------------------------------------------
-- 1. rosinality/vq-vae-2-pytorch vqvae.py (and train_vqvae.py's train step)
---------------------------------------------------------------------------------------------
describe("rosinality/vq-vae-2-pytorch vqvae.py", function()
    -- import distributed as dist_fn: one process, all_reduce leaves the tensor as it is
    local dist_fn = { all_reduce = function(tensor) return tensor end }

    -- class Quantize(nn.Module):
    local Quantize = nn.Module:extend("Quantize")
    -- def __init__(self, dim, n_embed, decay=0.99, eps=1e-5):
    nn.signature(Quantize, "self, dim, n_embed, decay=0.99, eps=1e-5")
    function Quantize:init(dim, n_embed, decay, eps)
        self.dim = dim
        self.n_embed = n_embed
        self.decay = decay
        self.eps = eps

        local embed = tide.randn(dim, n_embed)
        self:register_buffer("embed", embed)
        self:register_buffer("cluster_size", tide.zeros(n_embed))
        self:register_buffer("embed_avg", embed:clone())
    end

    function Quantize:forward(input)
        local flatten = input:reshape(-1, self.dim)
        local dist = (
            -- flatten.pow(2).sum(1, keepdim=True)
            flatten:pow(2):sum(2, { keepdim = true })
            - 2 * flatten:matmul(self.embed)
            -- + self.embed.pow(2).sum(0, keepdim=True)
            + self.embed:pow(2):sum(1, { keepdim = true })
        )
        -- _, embed_ind = (-dist).max(1)
        local _, embed_ind = (-dist):max(2)
        -- embed_onehot = F.one_hot(embed_ind, self.n_embed).type(flatten.dtype)
        local embed_onehot = F.one_hot(embed_ind, self.n_embed):type(flatten.dtype)
        -- embed_ind = embed_ind.view(*input.shape[:-1])
        embed_ind = embed_ind:view(unpack(input.shape[{ { 1, -2 } }]))
        local quantize = self:embed_code(embed_ind)

        if self.training then
            -- embed_onehot_sum = embed_onehot.sum(0)
            local embed_onehot_sum = embed_onehot:sum(1)
            -- embed_sum = flatten.transpose(0, 1) @ embed_onehot
            local embed_sum = flatten:transpose(1, 2):matmul(embed_onehot)

            dist_fn.all_reduce(embed_onehot_sum)
            dist_fn.all_reduce(embed_sum)

            -- self.cluster_size.data.mul_(self.decay).add_(embed_onehot_sum, alpha=1 - self.decay)
            self.cluster_size.data:mul_(self.decay):add_(
                embed_onehot_sum, { alpha = 1 - self.decay }
            )
            -- self.embed_avg.data.mul_(self.decay).add_(embed_sum, alpha=1 - self.decay)
            self.embed_avg.data:mul_(self.decay):add_(embed_sum, { alpha = 1 - self.decay })
            local n = self.cluster_size:sum()
            local cluster_size = (
                (self.cluster_size + self.eps) / (n + self.n_embed * self.eps) * n
            )
            -- embed_normalized = self.embed_avg / cluster_size.unsqueeze(0)
            local embed_normalized = self.embed_avg / cluster_size:unsqueeze(1)
            self.embed.data:copy_(embed_normalized)
        end

        local diff = (quantize:detach() - input):pow(2):mean()
        quantize = input + (quantize - input):detach()

        return quantize, diff, embed_ind
    end

    function Quantize:embed_code(embed_id)
        -- return F.embedding(embed_id, self.embed.transpose(0, 1))
        return F.embedding(embed_id, self.embed:transpose(1, 2))
    end

    -- class ResBlock(nn.Module):
    local ResBlock = nn.Module:extend("ResBlock")
    function ResBlock:init(in_channel, channel)
        self.conv = nn.Sequential(
            nn.ReLU(),
            -- nn.Conv2d(in_channel, channel, 3, padding=1),
            nn.Conv2d(in_channel, channel, 3, { padding = 1 }),
            -- nn.ReLU(inplace=True),
            nn.ReLU({ inplace = true }),
            nn.Conv2d(channel, in_channel, 1)
        )
    end

    function ResBlock:forward(input)
        local out = self.conv(input)
        -- out += input
        out:add_(input)

        return out
    end

    -- class Encoder(nn.Module):
    local Encoder = nn.Module:extend("Encoder")
    nn.signature(Encoder, "self, in_channel, channel, n_res_block, n_res_channel, stride")
    function Encoder:init(in_channel, channel, n_res_block, n_res_channel, stride)
        local blocks
        if stride == 4 then
            blocks = {
                -- nn.Conv2d(in_channel, channel // 2, 4, stride=2, padding=1),
                nn.Conv2d(in_channel, math.floor(channel / 2), 4, { stride = 2, padding = 1 }),
                nn.ReLU({ inplace = true }),
                nn.Conv2d(math.floor(channel / 2), channel, 4, { stride = 2, padding = 1 }),
                nn.ReLU({ inplace = true }),
                nn.Conv2d(channel, channel, 3, { padding = 1 }),
            }
        elseif stride == 2 then
            blocks = {
                nn.Conv2d(in_channel, math.floor(channel / 2), 4, { stride = 2, padding = 1 }),
                nn.ReLU({ inplace = true }),
                nn.Conv2d(math.floor(channel / 2), channel, 3, { padding = 1 }),
            }
        end

        -- for i in range(n_res_block):
        for _ = 1, n_res_block do
            -- blocks.append(ResBlock(channel, n_res_channel))
            table.insert(blocks, ResBlock(channel, n_res_channel))
        end

        table.insert(blocks, nn.ReLU({ inplace = true }))

        -- self.blocks = nn.Sequential(*blocks)
        self.blocks = nn.Sequential(unpack(blocks))
    end

    function Encoder:forward(input)
        return self.blocks(input)
    end

    -- class Decoder(nn.Module):
    local Decoder = nn.Module:extend("Decoder")
    nn.signature(Decoder, "self, in_channel, out_channel, channel, n_res_block, n_res_channel, stride")
    function Decoder:init(in_channel, out_channel, channel, n_res_block, n_res_channel, stride)
        local blocks = { nn.Conv2d(in_channel, channel, 3, { padding = 1 }) }

        for _ = 1, n_res_block do
            table.insert(blocks, ResBlock(channel, n_res_channel))
        end

        table.insert(blocks, nn.ReLU({ inplace = true }))

        if stride == 4 then
            -- blocks.extend([...])
            for _, m in ipairs({
                -- nn.ConvTranspose2d(channel, channel // 2, 4, stride=2, padding=1),
                nn.ConvTranspose2d(channel, math.floor(channel / 2), 4, { stride = 2, padding = 1 }),
                nn.ReLU({ inplace = true }),
                nn.ConvTranspose2d(
                    math.floor(channel / 2), out_channel, 4, { stride = 2, padding = 1 }
                ),
            }) do
                table.insert(blocks, m)
            end
        elseif stride == 2 then
            table.insert(blocks,
                nn.ConvTranspose2d(channel, out_channel, 4, { stride = 2, padding = 1 })
            )
        end

        self.blocks = nn.Sequential(unpack(blocks))
    end

    function Decoder:forward(input)
        return self.blocks(input)
    end

    -- class VQVAE(nn.Module):
    local VQVAE = nn.Module:extend("VQVAE")
    nn.signature(VQVAE, [[
        self,
        in_channel=3,
        channel=128,
        n_res_block=2,
        n_res_channel=32,
        embed_dim=64,
        n_embed=512,
        decay=0.99,
    ]])
    function VQVAE:init(in_channel, channel, n_res_block, n_res_channel, embed_dim, n_embed, decay) -- luacheck: ignore decay
        -- self.enc_b = Encoder(in_channel, channel, n_res_block, n_res_channel, stride=4)
        self.enc_b = Encoder(in_channel, channel, n_res_block, n_res_channel, { stride = 4 })
        self.enc_t = Encoder(channel, channel, n_res_block, n_res_channel, { stride = 2 })
        self.quantize_conv_t = nn.Conv2d(channel, embed_dim, 1)
        self.quantize_t = Quantize(embed_dim, n_embed)
        self.dec_t = Decoder(
            embed_dim, embed_dim, channel, n_res_block, n_res_channel, { stride = 2 }
        )
        self.quantize_conv_b = nn.Conv2d(embed_dim + channel, embed_dim, 1)
        self.quantize_b = Quantize(embed_dim, n_embed)
        self.upsample_t = nn.ConvTranspose2d(
            embed_dim, embed_dim, 4, { stride = 2, padding = 1 }
        )
        self.dec = Decoder(
            embed_dim + embed_dim,
            in_channel,
            channel,
            n_res_block,
            n_res_channel,
            { stride = 4 }
        )
    end

    function VQVAE:forward(input)
        local quant_t, quant_b, diff, _, _ = self:encode(input)
        local dec = self:decode(quant_t, quant_b)

        return dec, diff
    end

    function VQVAE:encode(input)
        local enc_b = self.enc_b(input)
        local enc_t = self.enc_t(enc_b)

        -- quant_t = self.quantize_conv_t(enc_t).permute(0, 2, 3, 1)
        local quant_t = self.quantize_conv_t(enc_t):permute(1, 3, 4, 2)
        local diff_t, id_t
        quant_t, diff_t, id_t = self.quantize_t(quant_t)
        -- quant_t = quant_t.permute(0, 3, 1, 2)
        quant_t = quant_t:permute(1, 4, 2, 3)
        -- diff_t = diff_t.unsqueeze(0)
        diff_t = diff_t:unsqueeze(1)

        local dec_t = self.dec_t(quant_t)
        -- enc_b = torch.cat([dec_t, enc_b], 1)
        enc_b = tide.cat({ dec_t, enc_b }, 2)

        local quant_b = self.quantize_conv_b(enc_b):permute(1, 3, 4, 2)
        local diff_b, id_b
        quant_b, diff_b, id_b = self.quantize_b(quant_b)
        quant_b = quant_b:permute(1, 4, 2, 3)
        diff_b = diff_b:unsqueeze(1)

        return quant_t, quant_b, diff_t + diff_b, id_t, id_b
    end

    function VQVAE:decode(quant_t, quant_b)
        local upsample_t = self.upsample_t(quant_t)
        local quant = tide.cat({ upsample_t, quant_b }, 2)
        local dec = self.dec(quant)

        return dec
    end

    function VQVAE:decode_code(code_t, code_b)
        local quant_t = self.quantize_t:embed_code(code_t)
        quant_t = quant_t:permute(1, 4, 2, 3)
        local quant_b = self.quantize_b:embed_code(code_b)
        quant_b = quant_b:permute(1, 4, 2, 3)

        local dec = self:decode(quant_t, quant_b)

        return dec
    end

    it("Quantize: one EMA step on fixed data matches PyTorch's buffers, codes and diff", function()
        local dim, n_embed = 4, 6
        local q = Quantize(dim, n_embed)
        -- deterministic codebook and input, the same in ref.py
        q.embed:copy_(tide.sin(tide.arange(dim * n_embed, { dtype = tide.float32 }) * 0.7):view(dim, n_embed))
        q.embed_avg:copy_(q.embed)
        local input = tide.cos(tide.arange(2 * 3 * 3 * dim, { dtype = tide.float32 }) * 0.3):view(2, 3, 3, dim)
        local quantize, diff, embed_ind = q(input)
        assert.equal(tide.Size({ 2, 3, 3 }), embed_ind:size())
        assert.same({ 4, 6, 6, 1, 1, 4, 5, 6, 1, 1, 2, 5, 6, 6, 1, 2, 5, 6 }, embed_ind:flatten():tolist())
        ported.assert_close_list({ 0.05, 0.02, 0.0, 0.02, 0.03, 0.06 }, q.cluster_size:tolist(), 1e-5, "cluster_size")
        ported.assert_close_list({ -0.48985621333122253, 32.63542175292969, 97592.046875, 43.7016716003418,
            11.839096069335938, -6.143609523773193, -17.521678924560547, -47.7147102355957, -62516.23828125,
            1.809570074081421, 22.259681701660156, 15.745199203491211, 16.91223907470703, 16.776830673217773,
            -36293.546875, -42.65005111694336, -31.99083709716797, -10.920607566833496, 0.9068200588226318,
            34.10982131958008, 98102.828125, 42.5760498046875, 10.03908920288086, -7.117936134338379 },
            q.embed:flatten():tolist(), 1e-3, "embed")
        assert.is_true(ported.close(diff:item(), 0.731403648853302, 1e-5))
        -- the straight-through output keeps the input's shape
        assert.equal(tide.Size({ 2, 3, 3, 4 }), quantize:size())
    end)

    it("VQVAE: two levels train a few steps; EMA buffers move; codes are the argmin; decode_code", function()
        tide.manual_seed(0)
        local device = "cpu"
        -- model = VQVAE().to(device), shrunk
        local model = VQVAE({ in_channel = 3, channel = 8, n_res_block = 1, n_res_channel = 4,
            embed_dim = 4, n_embed = 8 }):to(device)
        -- optimizer = optim.Adam(model.parameters(), lr=args.lr)
        local optimizer = optim.Adam(model:parameters(), { lr = 3e-3 })
        local criterion = nn.MSELoss()
        local latent_loss_weight = 0.25
        local img = tide.rand(4, 3, 16, 16) * 2 - 1

        local embed_avg0 = model.quantize_b.embed_avg:clone()
        local embed0 = model.quantize_t.embed:clone()
        local losses = {}
        model:train()
        for _ = 1, 6 do
            model:zero_grad()
            -- img = img.to(device)
            local out, latent_loss = model(img)
            local recon_loss = criterion(out, img)
            latent_loss = latent_loss:mean()
            local loss = recon_loss + latent_loss_weight * latent_loss
            loss:backward()
            optimizer:step()
            assert_finite(loss:item(), "vqvae loss")
            table.insert(losses, recon_loss:item())
        end
        assert.is_true(losses[#losses] < losses[1], "recon loss did not decrease")
        -- the EMA buffers moved and are not parameters
        assert.is_true((model.quantize_b.embed_avg - embed_avg0):abs():max():item() > 0)
        assert.is_true((model.quantize_t.embed - embed0):abs():max():item() > 0)
        assert.is_false(model.quantize_t.embed.requires_grad)
        local names = {}
        for name in pairs(model:state_dict()) do names[name] = true end
        assert.is_true(names["quantize_t.cluster_size"] and names["quantize_b.embed_avg"] and true or false)

        -- model.eval(); with torch.no_grad(): the codes are the argmin of the distances
        model:eval()
        local cs_before = model.quantize_b.cluster_size:clone()
        tide.no_grad(function()
            local quant_t, quant_b, diff, id_t, id_b = model:encode(img)
            assert.equal(tide.Size({ 4, 4, 2, 2 }), quant_t:size())
            assert.equal(tide.Size({ 4, 4, 4, 4 }), quant_b:size())
            assert.equal(tide.Size({ 1 }), diff:size())
            assert.equal(tide.Size({ 4, 2, 2 }), id_t:size())
            assert.equal(tide.Size({ 4, 4, 4 }), id_b:size())
            -- the bottom codes by hand: argmin over the codebook of |z - e|^2
            local enc_b = model.enc_b(img)
            local z = model.quantize_conv_t(model.enc_t(enc_b)):permute(1, 3, 4, 2):reshape(-1, 4)
            local e = model.quantize_t.embed
            local d = tide.cdist(z, e:t()) -- (N, n_embed)
            assert.same(d:argmin({ dim = 2 }):tolist(), id_t:flatten():tolist())
            -- quant_t is exactly the looked-up codebook vectors in eval
            local looked = e:t():index_select(1, id_t:flatten()):view(4, 2, 2, 4):permute(1, 4, 2, 3)
            assert.is_true(tide.allclose(looked, quant_t, { atol = 1e-5 }))
            -- decode_code(id_t, id_b) is decode(quant_t, quant_b)
            local dec = model:decode_code(id_t, id_b)
            assert.equal(tide.Size({ 4, 3, 16, 16 }), dec:size())
            assert.is_true(tide.allclose(dec, model:decode(quant_t, quant_b), { atol = 1e-5 }))
        end)
        -- no EMA update outside training
        assert.is_true(tide.equal(cs_before, model.quantize_b.cluster_size))
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. jzbontar/pixelcnn-pytorch main.py
---------------------------------------------------------------------------------------------
describe("jzbontar/pixelcnn-pytorch main.py", function()
    -- class MaskedConv2d(nn.Conv2d):
    local MaskedConv2d = nn.Conv2d:extend("MaskedConv2d")
    -- def __init__(self, mask_type, *args, **kwargs):
    function MaskedConv2d:init(mask_type, ...)
        -- super(MaskedConv2d, self).__init__(*args, **kwargs)
        nn.Conv2d.init(self, ...)
        -- assert mask_type in {'A', 'B'}
        assert(({ A = true, B = true })[mask_type])
        self:register_buffer("mask", self.weight.data:clone())
        -- _, _, kH, kW = self.weight.size()
        local _, _, kH, kW = unpack(self.weight:size())
        self.mask:fill_(1)
        -- self.mask[:, :, kH // 2, kW // 2 + (mask_type == 'B'):] = 0
        self.mask[{ {}, {}, math.floor(kH / 2) + 1, { math.floor(kW / 2) + (mask_type == "B" and 1 or 0) + 1, -1 } }] = 0
        -- self.mask[:, :, kH // 2 + 1:] = 0
        self.mask[{ {}, {}, { math.floor(kH / 2) + 1 + 1, -1 } }] = 0
    end

    function MaskedConv2d:forward(x)
        -- self.weight.data *= self.mask
        self.weight.data:mul_(self.mask)
        -- return super(MaskedConv2d, self).forward(x)
        return nn.Conv2d.forward(self, x)
    end

    local function make_net(fm, levels)
        return nn.Sequential(
            -- MaskedConv2d('A', 1,  fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
            MaskedConv2d("A", 1, fm, 7, 1, 3, { bias = false }), nn.BatchNorm2d(fm), nn.ReLU(true),
            MaskedConv2d("B", fm, fm, 7, 1, 3, { bias = false }), nn.BatchNorm2d(fm), nn.ReLU(true),
            MaskedConv2d("B", fm, fm, 7, 1, 3, { bias = false }), nn.BatchNorm2d(fm), nn.ReLU(true),
            -- nn.Conv2d(fm, 256, 1))
            nn.Conv2d(fm, levels, 1))
    end

    it("MaskedConv2d: the 'A' and 'B' masks, and the net's output at (i, j) sees only earlier pixels", function()
        tide.manual_seed(0)
        local a = MaskedConv2d("A", 1, 2, 3, 1, 1, { bias = false })
        local b = MaskedConv2d("B", 1, 2, 3, 1, 1, { bias = false })
        assert.same({ { 1, 1, 1 }, { 1, 0, 0 }, { 0, 0, 0 } }, a.mask[1][1]:tolist())
        assert.same({ { 1, 1, 1 }, { 1, 1, 0 }, { 0, 0, 0 } }, b.mask[1][1]:tolist())
        assert.is_nil(a.bias)
        assert.same({ 1, 1 }, { a.stride[1], a.padding[1] })
        -- the mask is a buffer: in state_dict, not among the parameters
        assert.is_not_nil(a:state_dict()["mask"])
        local n = 0
        for _ in pairs(a:parameters()) do n = n + 1 end
        assert.equal(1, n)

        local net = make_net(4, 8)
        net:eval() -- BatchNorm's batch statistics would mix every pixel in train mode
        local H, W = 6, 6
        for _, ij in ipairs({ { 3, 4 }, { 1, 1 }, { 6, 6 } }) do
            local i, j = ij[1], ij[2]
            local x = tide.rand(1, 1, H, W, { requires_grad = true })
            local out = net(x)
            out[{ 1, {}, i, j }]:sum():backward()
            local g = x.grad[1][1]
            for r = 1, H do
                for c = 1, W do
                    local future = r > i or (r == i and c >= j)
                    if future then
                        assert.equal(0, g[r][c]:item(), string.format("(%d,%d) sees (%d,%d)", i, j, r, c))
                    end
                end
            end
        end
        -- one 3x3 layer's output at (3, 3) sees exactly the pixels before it in its window ('B' also (3, 3))
        for _, m in ipairs({ a, b }) do
            local x = tide.rand(1, 1, 5, 5, { requires_grad = true })
            m(x)[{ 1, {}, 3, 3 }]:sum():backward()
            local seen = x.grad[1][1]:ne(0):to(tide.int64):tolist()
            assert.same({ { 0, 0, 0, 0, 0 }, { 0, 1, 1, 1, 0 }, { 0, 1, m == b and 1 or 0, 0, 0 },
                { 0, 0, 0, 0, 0 }, { 0, 0, 0, 0, 0 } }, seen)
        end
    end)

    it("trains with F.cross_entropy over the levels, then samples pixel by pixel", function()
        tide.manual_seed(1)
        local fm, levels, H = 8, 8, 8
        local net = make_net(fm, levels)
        -- optimizer = optim.Adam(net.parameters())
        local optimizer = optim.Adam(net:parameters())
        -- MNIST as 8-level 1x8x8 images in [0, 1]
        local images = tide.randint(0, levels, { 16, 1, H, H }):float() / (levels - 1)
        local tr = tide.data.DataLoader(tide.data.TensorDataset(images, tide.zeros(16)), { batch_size = 8, shuffle = true })
        local first, last
        for _ = 1, 3 do
            -- net.train(True)
            net:train(true)
            for input, _ in tr:iter() do
                -- target = Variable((input.data[:,0] * 255).long())   (class targets are 1-based)
                local target = (input.data[{ {}, 1 }] * (levels - 1)):round():long() + 1
                local loss = F.cross_entropy(net(input), target)
                optimizer:zero_grad()
                loss:backward()
                optimizer:step()
                assert_finite(loss:item(), "pixelcnn nll")
                first = first or loss:item()
                last = loss:item()
            end
        end
        assert.is_true(last < first, "nll did not decrease")

        -- sample = torch.Tensor(144, 1, 28, 28)
        local sample = tide.Tensor(4, 1, H, H)
        sample:fill_(0)
        net:train(false)
        tide.no_grad(function()
            for i = 1, H do
                for j = 1, H do
                    local out = net(sample)
                    -- probs = F.softmax(out[:, :, i, j]).data   (PyTorch 1.13's implicit dim warns)
                    local probs = F.softmax(out[{ {}, {}, i, j }], { dim = 2 }).data
                    -- sample[:, :, i, j] = torch.multinomial(probs, 1).float() / 255.
                    --   (multinomial's indices are 1-based: the level is one less)
                    sample[{ {}, {}, i, j }] = (tide.multinomial(probs, 1) - 1):float() / (levels - 1)
                end
            end
        end)
        assert.is_true(sample:min():item() >= 0 and sample:max():item() <= 1)
        -- every pixel is one of the levels
        local k = sample * (levels - 1)
        assert.is_true(tide.allclose(k, k:round(), { atol = 1e-4 }))
    end)
end)

---------------------------------------------------------------------------------------------
-- gaps the ports met
---------------------------------------------------------------------------------------------
describe("ported_scripts33 gaps", function()
    it("a subclass's super().__init__(*args, **kwargs): Base.init(self, ...) takes PyTorch's arguments", function()
        -- was: nn.Conv2d.init(self, 1, 4, 7, 1, 3, {bias = false}) kept a bias (the table read as bias)
        local C = nn.Conv2d:extend("S33Conv")
        function C:init(tag, ...)
            self.tag = tag
            nn.Conv2d.init(self, ...)
        end
        local c = C("A", 1, 4, 7, 1, 3, { bias = false })
        assert.is_nil(c.bias)
        assert.same({ 3, 3 }, c.padding)
        -- the whole positional form: (in, out, k, stride, padding, dilation, groups, bias)
        local g = C("B", 4, 4, 3, 1, 2, 2, 2, false)
        assert.is_nil(g.bias)
        assert.equal(2, g.groups)
        assert.same({ 2, 2 }, g.dilation)
        assert.equal(tide.Size({ 4, 2, 3, 3 }), g.weight:size())
        -- the canonical form and keywords only, as before
        assert.same({ 2, 2 }, C("C", 1, 2, 3, { stride = 2 }).stride)
        assert.is_not_nil(C("D", 1, 2, 3).bias)
        -- Linear and BatchNorm2d the same; the factory dtype applies
        local L = nn.Linear:extend("S33Linear")
        function L:init(...) nn.Linear.init(self, ...) end
        local l = L(3, 2, { bias = false, dtype = tide.float64 })
        assert.is_nil(l.bias)
        assert.equal(tide.float64, l.weight.dtype)
        local B = nn.BatchNorm2d:extend("S33BN")
        function B:init(...) nn.BatchNorm2d.init(self, ...) end
        local bn = B(4, 1e-3, { affine = false })
        assert.is_nil(bn.weight)
        assert.equal(1e-3, bn.eps)
        -- bad input still raises, naming the layer
        assert.has_error(function() C("E", 1, 2, 3, { strid = 2 }) end)
        assert.has_error(function() C("F", 1, 2, 3, 1, 0, 1, 1, true, "zeros", "cpu", tide.float32, 5) end,
            "tide: Conv2d: expected at most 11 arguments and an options table, got 12 (argument #12 is " ..
            "a number); remove it: Conv2d takes no such argument or option")
    end)
end)
