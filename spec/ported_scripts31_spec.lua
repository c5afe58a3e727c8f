-- ported_scripts31_spec.lua — junyanz/pytorch-CycleGAN-and-pix2pix ported line for line at tiny
-- sizes: models/networks.py (Identity, get_norm_layer, get_scheduler, init_weights with
-- net.apply(init_func) and m.__class__.__name__, init_net, ResnetGenerator/ResnetBlock with the
-- three padding types, UnetGenerator/UnetSkipConnectionBlock, NLayerDiscriminator,
-- PixelDiscriminator, GANLoss lsgan/vanilla/wgangp, cal_gradient_penalty) and
-- util/image_pool.py's ImagePool, then a CycleGAN G/D step, a pix2pix step and the wgangp
-- penalty's gradient. networks.py is the current master's (GANLoss(gan_mode), the wgangp
-- penalty, Identity), written from knowledge where the stored copy was older. The Python line
-- stands above each Lua line that differs from it. functools.partial is a Lua closure beside
-- the class it wraps (PyTorch's norm_layer.func).
local tide = require("tide")
local nn = tide.nn
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local function assert_finite(x)
    assert.is_true(x == x and x ~= math.huge and x ~= -math.huge, "not finite: " .. tostring(x))
end

-- x.shape as a plain list
local function dims(t)
    local d = {}
    for i = 1, t:dim() do d[i] = t:size(i) end
    return d
end

-- Python's list += [...]
local function extend(list, items)
    for _, v in ipairs(items) do list[#list + 1] = v end
    return list
end

---------------------------------------------------------------------------------------------
-- models/networks.py: spec/support/cyclegan_networks.lua (shared with ported_scripts59)
---------------------------------------------------------------------------------------------
local N = require("spec.support.cyclegan_networks")
local Identity = N.Identity
local get_norm_layer = N.get_norm_layer
local use_bias_of = N.use_bias_of
local get_scheduler = N.get_scheduler
local init_weights = N.init_weights
local init_net = N.init_net
local GANLoss = N.GANLoss
local cal_gradient_penalty = N.cal_gradient_penalty
local ResnetBlock = N.ResnetBlock
local ResnetGenerator = N.ResnetGenerator
local UnetGenerator = N.UnetGenerator
local NLayerDiscriminator = N.NLayerDiscriminator
local PixelDiscriminator = N.PixelDiscriminator

---------------------------------------------------------------------------------------------
-- util/image_pool.py
---------------------------------------------------------------------------------------------
-- class ImagePool(): a plain class (not an nn.Module)
local ImagePool = {}
ImagePool.__index = ImagePool
function ImagePool.new(pool_size)
    local self = setmetatable({}, ImagePool)
    self.pool_size = pool_size
    if self.pool_size > 0 then -- create an empty pool
        self.num_imgs = 0
        self.images = {}
    end
    return self
end

function ImagePool:query(images)
    if self.pool_size == 0 then -- if the buffer size is 0, do nothing
        return images
    end
    local return_images = {}
    -- for image in images:
    for _, image in ipairs(images:unbind()) do
        -- image = torch.unsqueeze(image.data, 0)
        image = tide.unsqueeze(image.data, 1)
        if self.num_imgs < self.pool_size then -- if the buffer is not full; keep inserting current images to the buffer
            self.num_imgs = self.num_imgs + 1
            -- self.images.append(image)
            self.images[#self.images + 1] = image
            return_images[#return_images + 1] = image
        else
            -- p = random.uniform(0, 1)
            local p = math.random()
            if p > 0.5 then -- by 50% chance, the buffer will return a previously stored image
                -- random_id = random.randint(0, self.pool_size - 1)  # randint is inclusive
                local random_id = math.random(1, self.pool_size)
                local tmp = self.images[random_id]:clone()
                self.images[random_id] = image
                return_images[#return_images + 1] = tmp
            else -- by another 50% chance, the buffer will return the current image
                return_images[#return_images + 1] = image
            end
        end
    end
    -- return_images = torch.cat(return_images, 0)   # collect all the images and return
    return_images = tide.cat(return_images, 1)
    return return_images
end

---------------------------------------------------------------------------------------------
describe("pytorch-CycleGAN-and-pix2pix models/networks.py", function()
    it("m.__class__.__name__ and init_weights through net.apply(init_func)", function()
        tide.manual_seed(0)
        assert.are.equal("Conv2d", nn.Conv2d(3, 4, 3).__class__.__name__)
        assert.are.equal(nn.Conv2d, nn.Conv2d(3, 4, 3).__class__)
        assert.are.equal("ResnetBlock", ResnetBlock(4, "zero", get_norm_layer("batch"), false, false).__class__.__name__)
        -- the class name is what classname.find('Conv') reads: ConvTranspose2d too, not BatchNorm
        local net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ConvTranspose2d(4, 2, 3), nn.Linear(2, 2))
        init_net(net, "normal", 0.02)
        assert.is_true(net[1].weight:std():item() < 0.05)
        assert.are.equal(0, net[1].bias:abs():sum():item())
        assert.is_true((net[2].weight - 1):abs():max():item() < 0.2)
        assert.are.equal(0, net[3].bias:abs():sum():item())
        for _, t in ipairs({ "xavier", "kaiming", "orthogonal" }) do
            init_weights(net, t, 0.02)
            assert_finite(net[1].weight:sum():item())
        end
        assert.has_error(function() init_weights(net, "nope") end, "initialization method [nope] is not implemented")
    end)

    it("get_norm_layer partials and get_scheduler's four policies", function()
        local norm_layer = get_norm_layer("instance")
        assert.is_true(use_bias_of(norm_layer))
        local n = norm_layer(4)
        assert.are.equal("InstanceNorm2d", n.__class__.__name__)
        assert.is_false(use_bias_of(get_norm_layer("batch")))
        assert.are.equal("Identity", get_norm_layer("none")(4).__class__.__name__)
        local p = nn.Parameter(tide.randn(2))
        local lrs = {}
        for _, policy in ipairs({ "linear", "step", "plateau", "cosine" }) do
            local optimizer = optim.Adam({ p }, { lr = 0.0002, betas = { 0.5, 0.999 } })
            local opt = { lr_policy = policy, epoch_count = 1, n_epochs = 2, n_epochs_decay = 2, lr_decay_iters = 2 }
            local scheduler = get_scheduler(optimizer, opt)
            for _ = 1, 4 do
                optimizer:step()
                -- def update_learning_rate(self): if self.opt.lr_policy == 'plateau': scheduler.step(self.metric) else: scheduler.step()
                if policy == "plateau" then
                    scheduler:step(1.0)
                else
                    scheduler:step()
                end
            end
            lrs[policy] = optimizer.param_groups[1].lr
        end
        -- LambdaLR at epoch 4: 1 - max(0, 4 + 1 - 2) / 3 = 0; StepLR: 2e-4 * 0.1^2; plateau: 2e-4 (patience 5)
        assert.is_true(math.abs(lrs.linear - 0) < 1e-12)
        assert.is_true(math.abs(lrs.step - 2e-6) < 1e-12)
        assert.is_true(math.abs(lrs.plateau - 2e-4) < 1e-12)
        assert_finite(lrs.cosine)
    end)

    it("ResnetGenerator (reflect/replicate/zero) and UnetGenerator shapes", function()
        tide.manual_seed(1)
        local x = tide.randn(2, 3, 32, 32)
        for _, pt in ipairs({ "reflect", "replicate", "zero" }) do
            local netG = ResnetGenerator(3, 3, 4,
                { norm_layer = get_norm_layer("instance"), use_dropout = true, n_blocks = 2, padding_type = pt })
            assert.are.same({ 2, 3, 32, 32 }, dims(netG(x)))
        end
        -- unet_256 is UnetGenerator(input_nc, output_nc, 8, ngf, ...): 5 levels here for 32x32
        local netG = UnetGenerator(3, 3, 5, 4, { norm_layer = get_norm_layer("batch"), use_dropout = false })
        local y = netG(x)
        assert.are.same({ 2, 3, 32, 32 }, dims(y))
        assert.is_true(y:abs():max():item() <= 1)
        local D = NLayerDiscriminator(3, 4, { n_layers = 3, norm_layer = get_norm_layer("batch") })
        assert.are.same({ 2, 1, 2, 2 }, dims(D(x)))
        local P = PixelDiscriminator(3, 4, { norm_layer = get_norm_layer("instance") })
        assert.are.same({ 2, 1, 32, 32 }, dims(P(x)))
    end)

    it("GANLoss: lsgan/vanilla targets by expand_as, wgangp means", function()
        local pred = tide.tensor({ { 0.5, 2.0 }, { -1.0, 0.0 } })
        local l = GANLoss("lsgan")
        assert.are.same({ 2, 2 }, dims(l:get_target_tensor(pred, true)))
        -- MSE to 1: (0.25 + 1 + 4 + 1) / 4
        assert.is_true(math.abs(l(pred, true):item() - 1.5625) < 1e-6)
        assert.is_true(math.abs(l(pred, false):item() - 1.3125) < 1e-6)
        -- vanilla: BCEWithLogitsLoss to 1 and to 0; PyTorch 1.13 gives 0.6518534421920776, 1.0268535614013672
        assert.is_true(math.abs(GANLoss("vanilla")(pred, true):item() - 0.6518534421920776) < 1e-6)
        assert.is_true(math.abs(GANLoss("vanilla")(pred, false):item() - 1.0268535614013672) < 1e-6)
        assert.is_true(math.abs(GANLoss("wgangp")(pred, true):item() + 0.375) < 1e-6)
        -- the labels are buffers: in the state_dict, moved by .to
        local sd = GANLoss("lsgan", 0.9):state_dict()
        assert.is_true(math.abs(sd.real_label:item() - 0.9) < 1e-6)
        assert.has_error(function() GANLoss("hinge") end, "gan mode hinge not implemented")
    end)

    it("a CycleGAN step: G_A/G_B, D_A/D_B, GAN + cycle + identity losses, ImagePool", function()
        tide.manual_seed(2)
        math.randomseed(2)
        local device = tide.device("cpu")
        local norm_layer = get_norm_layer("instance")
        local netG_A = init_net(ResnetGenerator(3, 3, 4, { norm_layer = norm_layer, n_blocks = 1 }), "normal", 0.02)
        local netG_B = init_net(ResnetGenerator(3, 3, 4, { norm_layer = norm_layer, n_blocks = 1 }), "normal", 0.02)
        local netD_A = init_net(NLayerDiscriminator(3, 4, { n_layers = 2, norm_layer = norm_layer }), "normal", 0.02)
        local netD_B = init_net(NLayerDiscriminator(3, 4, { n_layers = 2, norm_layer = norm_layer }), "normal", 0.02)
        local fake_A_pool, fake_B_pool = ImagePool.new(2), ImagePool.new(2)
        -- self.criterionGAN = networks.GANLoss(opt.gan_mode).to(self.device)
        local criterionGAN = GANLoss("lsgan"):to(device)
        local criterionCycle = nn.L1Loss()
        local criterionIdt = nn.L1Loss()
        -- itertools.chain(self.netG_A.parameters(), self.netG_B.parameters())
        local g_params = extend(extend({}, netG_A:parameters()), netG_B:parameters())
        local d_params = extend(extend({}, netD_A:parameters()), netD_B:parameters())
        local optimizer_G = optim.Adam(g_params, { lr = 0.002, betas = { 0.5, 0.999 } })
        local optimizer_D = optim.Adam(d_params, { lr = 0.002, betas = { 0.5, 0.999 } })
        local lambda_A, lambda_B, lambda_idt = 10.0, 10.0, 0.5
        local real_A, real_B = tide.rand(1, 3, 32, 32) * 2 - 1, tide.rand(1, 3, 32, 32) * 2 - 1

        -- def set_requires_grad(self, nets, requires_grad=False):
        local function set_requires_grad(nets, requires_grad)
            for _, net in ipairs(nets) do
                for _, param in ipairs(net:parameters()) do
                    param.requires_grad = requires_grad
                end
            end
        end
        -- def backward_D_basic(self, netD, real, fake):
        local function backward_D_basic(netD, real, fake)
            local pred_real = netD(real)
            local loss_D_real = criterionGAN(pred_real, true)
            -- pred_fake = netD(fake.detach())
            local pred_fake = netD(fake:detach())
            local loss_D_fake = criterionGAN(pred_fake, false)
            local loss_D = (loss_D_real + loss_D_fake) * 0.5
            loss_D:backward()
            return loss_D
        end

        local losses_G = {}
        for step = 1, 4 do
            -- forward
            local fake_B = netG_A(real_A)
            local rec_A = netG_B(fake_B)
            local fake_A = netG_B(real_B)
            local rec_B = netG_A(fake_A)
            -- G_A and G_B
            set_requires_grad({ netD_A, netD_B }, false)
            optimizer_G:zero_grad()
            local idt_A = netG_A(real_B)
            local loss_idt_A = criterionIdt(idt_A, real_B) * lambda_B * lambda_idt
            local idt_B = netG_B(real_A)
            local loss_idt_B = criterionIdt(idt_B, real_A) * lambda_A * lambda_idt
            local loss_G_A = criterionGAN(netD_A(fake_B), true)
            local loss_G_B = criterionGAN(netD_B(fake_A), true)
            local loss_cycle_A = criterionCycle(rec_A, real_A) * lambda_A
            local loss_cycle_B = criterionCycle(rec_B, real_B) * lambda_B
            local loss_G = loss_G_A + loss_G_B + loss_cycle_A + loss_cycle_B + loss_idt_A + loss_idt_B
            loss_G:backward()
            optimizer_G:step()
            losses_G[step] = loss_G:item()
            -- D_A and D_B
            set_requires_grad({ netD_A, netD_B }, true)
            optimizer_D:zero_grad()
            -- fake_B = self.fake_B_pool.query(self.fake_B)
            local pooled_B = fake_B_pool:query(fake_B)
            assert.is_false(pooled_B.requires_grad)
            assert_finite(backward_D_basic(netD_A, real_B, pooled_B):item())
            local pooled_A = fake_A_pool:query(fake_A)
            assert_finite(backward_D_basic(netD_B, real_A, pooled_A):item())
            optimizer_D:step()
            assert_finite(losses_G[step])
        end
        assert.is_true(losses_G[4] < losses_G[1])
        assert.are.equal(2, fake_A_pool.num_imgs)
    end)

    it("a pix2pix step: UnetGenerator + conditional NLayerDiscriminator on torch.cat((real_A, fake_B), 1)", function()
        tide.manual_seed(3)
        local norm_layer = get_norm_layer("batch")
        local netG = init_net(UnetGenerator(3, 3, 5, 4, { norm_layer = norm_layer, use_dropout = true }), "normal", 0.02)
        local netD = init_net(NLayerDiscriminator(6, 4, { n_layers = 2, norm_layer = norm_layer }), "normal", 0.02)
        local criterionGAN = GANLoss("vanilla")
        local criterionL1 = nn.L1Loss()
        local optimizer_G = optim.Adam(netG:parameters(), { lr = 0.002, betas = { 0.5, 0.999 } })
        local optimizer_D = optim.Adam(netD:parameters(), { lr = 0.002, betas = { 0.5, 0.999 } })
        local real_A, real_B = tide.rand(2, 3, 32, 32) * 2 - 1, tide.rand(2, 3, 32, 32) * 2 - 1
        local l1s = {}
        for step = 1, 4 do
            local fake_B = netG(real_A)
            -- backward_D: fake_AB = torch.cat((self.real_A, self.fake_B), 1)
            for _, prm in ipairs(netD:parameters()) do prm.requires_grad = true end
            optimizer_D:zero_grad()
            local fake_AB = tide.cat({ real_A, fake_B }, 2)
            local pred_fake = netD(fake_AB:detach())
            local loss_D_fake = criterionGAN(pred_fake, false)
            local real_AB = tide.cat({ real_A, real_B }, 2)
            local pred_real = netD(real_AB)
            local loss_D_real = criterionGAN(pred_real, true)
            local loss_D = (loss_D_fake + loss_D_real) * 0.5
            loss_D:backward()
            optimizer_D:step()
            -- backward_G
            for _, prm in ipairs(netD:parameters()) do prm.requires_grad = false end
            optimizer_G:zero_grad()
            local loss_G_GAN = criterionGAN(netD(fake_AB), true)
            local loss_G_L1 = criterionL1(fake_B, real_B) * 100.0
            local loss_G = loss_G_GAN + loss_G_L1
            loss_G:backward()
            optimizer_G:step()
            l1s[step] = loss_G_L1:item()
            assert_finite(loss_D:item())
            assert_finite(loss_G:item())
        end
        assert.is_true(l1s[4] < l1s[1])
    end)

    it("cal_gradient_penalty: torch.autograd.grad(create_graph=True) and its gradient", function()
        tide.manual_seed(4)
        local device = tide.device("cpu")
        local netD = NLayerDiscriminator(3, 4, { n_layers = 2, norm_layer = get_norm_layer("instance") })
        local criterionGAN = GANLoss("wgangp")
        local optimizer_D = optim.Adam(netD:parameters(), { lr = 0.001, betas = { 0.5, 0.999 } })
        local real, fake = tide.randn(2, 3, 16, 16), tide.randn(2, 3, 16, 16)
        for _, t in ipairs({ "real", "fake", "mixed" }) do
            optimizer_D:zero_grad()
            local loss_D = criterionGAN(netD(real), true) + criterionGAN(netD(fake), false)
            local gradient_penalty, gradients = cal_gradient_penalty(netD, real, fake, device, t, 1.0, 10.0)
            assert.are.same({ 2, 768 }, dims(gradients))
            assert_finite(gradient_penalty:item())
            loss_D = loss_D + gradient_penalty
            loss_D:backward()
            -- the penalty reaches the discriminator's weights through the double backward
            assert.is_true(netD.model[1].weight.grad:abs():sum():item() > 0)
            optimizer_D:step()
        end
        assert.are.equal(0.0, (cal_gradient_penalty(netD, real, fake, device, "mixed", 1.0, 0.0)))
    end)

    it("torch.autograd.grad with every parameter by name, only_inputs accepted as PyTorch", function()
        local x = tide.tensor({ { 1.0, -2.0, 3.0 } }, { requires_grad = true })
        local y = (x ^ 2):sum()
        -- torch.autograd.grad(outputs=y, inputs=x, grad_outputs=torch.ones(()), create_graph=True, retain_graph=True, only_inputs=True)
        local g = tide.autograd.grad({ outputs = y, inputs = x, grad_outputs = tide.ones({}),
            create_graph = true, retain_graph = true, only_inputs = true })
        assert.are.same({ { 2, -4, 6 } }, g[1]:tolist())
        assert.is_true(g[1].requires_grad)
        -- positional with only_inputs in the options, and a list of inputs
        local g2 = tide.autograd.grad(y, { x }, { retain_graph = true, only_inputs = true })
        assert.are.same({ { 2, -4, 6 } }, g2[1]:tolist())
        -- only_inputs = false is ignored with PyTorch's warning
        require("tide._warn").reset("autograd.grad.only_inputs")
        local saved, got = io.stderr, {}
        io.stderr = { write = function(_, m) got[#got + 1] = m end } -- luacheck: ignore
        local ok, g3 = pcall(tide.autograd.grad, y, x, { retain_graph = true, only_inputs = false })
        io.stderr = saved -- luacheck: ignore
        assert.is_true(ok, tostring(g3))
        assert.is_truthy(table.concat(got):find("only_inputs argument is deprecated and is ignored now", 1, true))
        assert.are.same({ { 2, -4, 6 } }, g3[1]:tolist())
        -- bad input names the value and the fix; x's gradient stays untouched
        assert.has_error(function() tide.autograd.grad({ outputs = y, inputs = x, creat_graph = true }) end,
            "tide: autograd.grad: unknown argument 'creat_graph'; PyTorch's are outputs, inputs, " ..
            "grad_outputs, retain_graph, create_graph, only_inputs, allow_unused, is_grads_batched")
        assert.has_error(function() tide.autograd.grad({ outputs = y }) end,
            "tide: autograd.grad: by name it needs both outputs = and inputs =, got only outputs")
        assert.has_error(function() tide.autograd.grad(y, x, { only_inputs = 1 }) end,
            "tide: autograd.grad: only_inputs must be a boolean, got number (PyTorch's deprecated option; leave it out)")
        assert.is_nil(x.grad)
    end)
end)
