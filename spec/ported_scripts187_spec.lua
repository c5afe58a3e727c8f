-- ported_scripts187_spec.lua — junyanz/pytorch-CycleGAN-and-pix2pix models/networks.py
-- (get_norm_layer instance / batch through functools.partial, get_scheduler "linear" with its
-- lambda_rule on LambdaLR and "step", init_weights normal / xavier / kaiming / orthogonal,
-- ResnetGenerator + ResnetBlock with ReflectionPad2d, UnetGenerator + UnetSkipConnectionBlock,
-- NLayerDiscriminator, PixelDiscriminator, GANLoss lsgan / vanilla / wgangp, cal_gradient_penalty
-- "mixed" with autograd.grad create_graph) and util/image_pool.py (ImagePool), at tiny sizes.
-- networks.py's line-for-line port is spec/support/cyclegan_networks.lua (shared with
-- ported_scripts31/59, the current master's file); this spec checks it against PyTorch 1.13 with
-- the same weights (a formula over each parameter's index in named_parameters order) and ports
-- image_pool.py below. The Python line stands above each Lua line that differs from it.
local tide = require("tide")
local nn = tide.nn

local ported = require("spec.support.ported")
local networks = require("spec.support.cyclegan_networks")
local close, assert_close_list = ported.close, ported.assert_close_list

-- with torch.no_grad(): for i, (n, p) in enumerate(net.named_parameters()):
--     p.copy_((0.3 * torch.sin(0.37 * j + 1.1 * (i + 1))).view(p.shape))
local function fill(net)
    tide.no_grad(function()
        for i, pair in ipairs(net:named_parameters()) do
            local p = pair[2]
            local v = {}
            for j = 0, p:numel() - 1 do v[j + 1] = 0.3 * math.sin(0.37 * j + 1.1 * i) end
            p:copy_(tide.tensor(v):view(p:size()))
        end
    end)
end

-- torch.sin(0.13 * j + ph).view(*shape)
local function inp(shape, ph)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local v = {}
    for j = 0, n - 1 do v[j + 1] = math.sin(0.13 * j + ph) end
    return tide.tensor(v):view(shape)
end

-- shape, sum, sum of squares and four entries (first, 8th, middle, last), as the reference prints
local function check(t, shape, want, tol, what)
    assert.same(shape, t:size())
    local f = t:detach():reshape(-1):to("float64")
    local n = f:numel()
    local got = { f:sum():item(), (f * f):sum():item(), f[1]:item(), f[8]:item(),
        f[math.floor(n / 2) + 1]:item(), f[n]:item() }
    assert_close_list(want, got, tol, what)
end

local x = inp({ 2, 3, 16, 16 }, 0.4)
local y = inp({ 2, 3, 16, 16 }, 1.7)

describe("ported_scripts187: CycleGAN/pix2pix networks.py against PyTorch 1.13", function()
    it("ResnetGenerator (instance norm, n_blocks 2, ReflectionPad2d) matches", function()
        -- G = ResnetGenerator(3, 3, 4, norm_layer=get_norm_layer('instance'), n_blocks=2)
        local G = networks.ResnetGenerator(3, 3, 4,
            { norm_layer = networks.get_norm_layer("instance"), n_blocks = 2 })
        fill(G)
        check(G(x), { 2, 3, 16, 16 }, { -147.6836637, 1074.828523, -0.1738316715, 0.9968997836,
            0.04734681547, -0.9954718351 }, 1e-4, "resnet")
    end)

    it("UnetGenerator (batch norm, num_downs 5, 32 x 32) matches", function()
        -- five downsamplings need 32 x 32: 16 x 16 would reach 0 x 0 in the innermost block
        local U = networks.UnetGenerator(3, 3, 5, 4, networks.get_norm_layer("batch"))
        fill(U)
        check(U(inp({ 2, 3, 32, 32 }, 0.9)), { 2, 3, 32, 32 }, { 715.2291423, 4603.7436,
            0.9109209776, 0.9889143109, 0.2233645022, 0.6298923492 }, 1e-4, "unet")
    end)

    it("NLayerDiscriminator, GANLoss, cal_gradient_penalty and its gradient match", function()
        local D = networks.NLayerDiscriminator(3, 4, 2, networks.get_norm_layer("batch"))
        fill(D)
        local dx = D(x)
        check(dx, { 2, 1, 2, 2 }, { 3.496505365, 2.800753941, 0.8247154951, -0.1572861522,
            0.6775383949, -0.1572861522 }, 1e-4, "nlayer")
        local want = { lsgan = { 0.4759678841, 0.350094229 },
            vanilla = { 0.5172496438, 0.9543127418 }, wgangp = { -0.4370631576, 0.4370631576 } }
        for mode, w in pairs(want) do
            local L = networks.GANLoss(mode)
            assert_close_list(w, { L(dx, true):item(), L(dx, false):item() }, 1e-5, mode)
        end
        -- the "mixed" alpha, torch.rand(2, 1), drawn fixed on both sides: [[0.3], [0.8]]
        local rand = tide.rand
        tide.rand = function() return tide.tensor({ { 0.3 }, { 0.8 } }) end
        local ok, gp = pcall(networks.cal_gradient_penalty, D, x, y, "cpu")
        tide.rand = rand
        assert(ok, gp)
        assert(close(gp:item(), 2.630507946, 1e-4), "gp " .. gp:item())
        gp:backward()
        -- D.model[0].weight.grad, through the create_graph gradient
        check(D.model[1].weight.grad, { 4, 3, 4, 4 }, { -163.0558679, 51405.4228, 7.071586132,
            -21.16347504, 12.98650837, -6.061548233 }, 1e-3, "gp grad")
    end)

    it("PixelDiscriminator (instance norm) matches", function()
        local P = networks.PixelDiscriminator(3, 4, networks.get_norm_layer("instance"))
        fill(P)
        check(P(x), { 2, 1, 16, 16 }, { 192.3386958, 101.0864549, 0.5083081722, 0.6980553865,
            0.2444233596, 0.7161913514 }, 1e-4, "pixel")
    end)

    it("get_scheduler linear and step give PyTorch's learning rates over 5 epochs", function()
        local w = nn.Parameter(tide.zeros(2))
        local function lrs(opt, adam_opts)
            local o = tide.optim.Adam({ w }, adam_opts)
            local s = networks.get_scheduler(o, opt)
            local out = {}
            for e = 1, 5 do
                o:step()
                s:step()
                out[e] = o.param_groups[1].lr
            end
            return out
        end
        assert_close_list({ 0.0002, 0.00015, 0.0001, 5e-05, 0 }, lrs({ lr_policy = "linear",
            epoch_count = 1, n_epochs = 2, n_epochs_decay = 3 },
            { lr = 0.0002, betas = { 0.5, 0.999 } }), 1e-12, "linear")
        assert_close_list({ 0.0002, 2e-05, 2e-05, 2e-06, 2e-06 },
            lrs({ lr_policy = "step", lr_decay_iters = 2 }, { lr = 0.0002 }), 1e-12, "step")
    end)

    it("init_weights: normal / xavier / kaiming / orthogonal by their statistics", function()
        tide.manual_seed(187)
        -- one 32 -> 32 3 x 3 conv (9216 weights, fan_in = fan_out = 288) and a BatchNorm2d
        local net = nn.Sequential(nn.Conv2d(32, 32, 3), nn.BatchNorm2d(32))
        local conv, bn = net[1], net[2]
        local function std(t) return t:std():item() end
        networks.init_weights(net, "normal", 0.02)
        assert(math.abs(std(conv.weight) - 0.02) < 0.001 and math.abs(conv.weight:mean():item())
            < 0.001, "normal std " .. std(conv.weight))
        assert.equal(0, conv.bias:abs():sum():item())
        assert(math.abs(bn.weight:mean():item() - 1) < 0.02 and std(bn.weight) > 0.005
            and std(bn.weight) < 0.04, "batchnorm weight")
        assert.equal(0, bn.bias:abs():sum():item())
        networks.init_weights(net, "xavier", 0.02)
        local xs = 0.02 * math.sqrt(2 / (288 + 288))
        assert(math.abs(std(conv.weight) / xs - 1) < 0.05, "xavier std " .. std(conv.weight))
        networks.init_weights(net, "kaiming")
        local ks = math.sqrt(2 / 288)
        assert(math.abs(std(conv.weight) / ks - 1) < 0.05, "kaiming std " .. std(conv.weight))
        networks.init_weights(net, "orthogonal", 0.02)
        -- rows of the 32 x 288 flattened weight are orthogonal with norm gain: W W^T = gain^2 I
        local W = conv.weight:view(32, -1)
        local err = (W:matmul(W:t()) - tide.eye(32) * 0.0004):abs():max():item()
        assert(err < 1e-6, "orthogonal W W^T - gain^2 I: " .. err)
    end)
end)

---------------------------------------------------------------------------------------------
-- util/image_pool.py
---------------------------------------------------------------------------------------------
-- import random: a fixed draw here, random.uniform and random.randint replaying a script
local random = { u = {}, r = {} }
function random.uniform(a, b) return a + (b - a) * table.remove(random.u, 1) end
function random.randint(a, b) return a + table.remove(random.r, 1) % (b - a + 1) end

-- class ImagePool():
local ImagePool = ported.class("ImagePool")
function ImagePool:__init__(pool_size)
    self.pool_size = pool_size
    if self.pool_size > 0 then -- create an empty pool
        self.num_imgs = 0
        self.images = {}
    end
end

function ImagePool:query(images)
    if self.pool_size == 0 then -- if the buffer size is 0, do nothing
        return images
    end
    local return_images = {}
    -- for image in images:
    for b = 1, images:size(1) do
        -- image = torch.unsqueeze(image.data, 0)
        local image = tide.unsqueeze(images[b].data, 1)
        if self.num_imgs < self.pool_size then
            self.num_imgs = self.num_imgs + 1
            -- self.images.append(image)
            table.insert(self.images, image)
            table.insert(return_images, image)
        else
            local p = random.uniform(0, 1)
            if p > 0.5 then
                -- random_id = random.randint(0, self.pool_size - 1)  # randint is inclusive
                local random_id = random.randint(0, self.pool_size - 1) + 1
                local tmp = self.images[random_id]:clone()
                self.images[random_id] = image
                table.insert(return_images, tmp)
            else
                table.insert(return_images, image)
            end
        end
    end
    -- return_images = torch.cat(return_images, 0)
    return_images = tide.cat(return_images, 1)
    return return_images
end

describe("ported_scripts187: image_pool.py ImagePool", function()
    it("fills, then swaps or passes through on a fixed draw", function()
        local pool = ImagePool(2)
        local function batch(a, b)
            return tide.tensor({ a, b }):view(2, 1, 1, 1):expand(2, 3, 4, 4)
        end
        local function firsts(t) return { t[1][1][1][1]:item(), t[2][1][1][1]:item() } end
        assert.same({ 1, 2 }, firsts(pool:query(batch(1, 2)))) -- fills the pool
        -- p = 0.7 > 0.5: swap with pool[1] (0-based randint 1) -> 2; p = 0.2: pass 4 through
        random.u, random.r = { 0.7, 0.2 }, { 1 }
        assert.same({ 2, 4 }, firsts(pool:query(batch(3, 4))))
        -- p = 0.9: returns pool[0] = 1 and stores 5; p = 0.6: returns pool[1] = 3 (stored above)
        random.u, random.r = { 0.9, 0.6 }, { 0, 1 }
        local out = pool:query(batch(5, 6))
        assert.same({ 2, 3, 4, 4 }, out:size())
        assert.same({ 1, 3 }, firsts(out))
        assert.same({ 5, 6 }, { pool.images[1][1][1][1][1]:item(),
            pool.images[2][1][1][1][1]:item() })
        assert.equal(2, #pool.images)
        assert.equal(x, ImagePool(0):query(x)) -- pool_size 0 returns its input
    end)
end)
