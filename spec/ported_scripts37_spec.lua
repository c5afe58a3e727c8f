-- ported_scripts37_spec.lua — eriklindernoren/PyTorch-GAN ported line for line: began (the
-- autoencoder discriminator, k_t and the convergence measure M), lsgan, relativistic_gan (the
-- relativistic average losses), softmax_gan (the partition function) and stargan (models.py's
-- ResidualBlock, GeneratorResNet, Discriminator, and one step of stargan.py with the gradient
-- penalty). argparse's opt is a table of the same names, MNIST/CelebA random images; the
-- scripts' `Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`, Variable(...) and
-- imgs.type(Tensor) forms are kept. The Python line stands above each Lua line that differs from
-- it. Dims, indices and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local Variable = tide.autograd.Variable
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local close = ported.close

-- the parameters of a network, copied (to see which optimizer step changed which network)
local function snapshot(m)
    local s = {}
    for i, p in ipairs(m:parameters()) do
        s[i] = p:detach():clone()
    end
    return s
end
local function changed(m, s)
    for i, p in ipairs(m:parameters()) do
        if (p:detach() - s[i]):abs():max():item() > 0 then
            return true
        end
    end
    return false
end

-- datasets.MNIST(..., transform=[Resize(img_size), ToTensor(), Normalize([0.5], [0.5])]):
-- random images in [-1, 1] and random labels
local function mnist_loader(opt, n)
    local imgs = tide.rand(n, opt.channels, opt.img_size, opt.img_size) * 2 - 1
    local ds = tide.data.TensorDataset(imgs, tide.randint(0, 10, { n }))
    -- dataloader = torch.utils.data.DataLoader(..., batch_size=opt.batch_size, shuffle=True)
    return tide.data.DataLoader(ds, { batch_size = opt.batch_size, shuffle = true })
end

-- cuda = True if torch.cuda.is_available() else False
local cuda = tide.cuda.is_available() and true or false
-- Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
local Tensor = cuda and tide.cuda.FloatTensor or tide.FloatTensor

-- the scripts' common DCGAN-style generator (began, lsgan, relativistic_gan)
local function make_generator(opt, first_bn)
    local Generator = nn.Module:extend("Generator")
    function Generator:init()
        -- self.init_size = opt.img_size // 4
        self.init_size = math.floor(opt.img_size / 4)
        -- self.l1 = nn.Sequential(nn.Linear(opt.latent_dim, 128 * self.init_size ** 2))
        self.l1 = nn.Sequential(nn.Linear(opt.latent_dim, 128 * self.init_size ^ 2))
        local layers = {}
        if first_bn then
            layers[#layers + 1] = nn.BatchNorm2d(128)
        end
        for _, l in ipairs({
            -- nn.Upsample(scale_factor=2),
            nn.Upsample({ scale_factor = 2 }),
            -- nn.Conv2d(128, 128, 3, stride=1, padding=1),
            nn.Conv2d(128, 128, 3, { stride = 1, padding = 1 }),
            nn.BatchNorm2d(128, 0.8),
            -- nn.LeakyReLU(0.2, inplace=True),
            nn.LeakyReLU(0.2, { inplace = true }),
            nn.Upsample({ scale_factor = 2 }),
            nn.Conv2d(128, 64, 3, { stride = 1, padding = 1 }),
            nn.BatchNorm2d(64, 0.8),
            nn.LeakyReLU(0.2, { inplace = true }),
            nn.Conv2d(64, opt.channels, 3, { stride = 1, padding = 1 }),
            nn.Tanh(),
        }) do
            layers[#layers + 1] = l
        end
        -- self.conv_blocks = nn.Sequential(...)
        self.conv_blocks = nn.Sequential(unpack(layers))
    end

    function Generator:forward(z)
        local out = self.l1(z)
        -- out = out.view(out.shape[0], 128, self.init_size, self.init_size)
        out = out:view(out.shape[1], 128, self.init_size, self.init_size)
        local img = self.conv_blocks(out)
        return img
    end
    return Generator
end

-- the lsgan / relativistic_gan discriminator: adv_layer a Linear, or a Sequential of one
local function make_discriminator(opt, sequential_adv)
    local Discriminator = nn.Module:extend("Discriminator")
    function Discriminator:init()
        -- def discriminator_block(in_filters, out_filters, bn=True):
        local function discriminator_block(in_filters, out_filters, bn)
            if bn == nil then bn = true end
            -- block = [nn.Conv2d(in_filters, out_filters, 3, 2, 1), nn.LeakyReLU(0.2, inplace=True), nn.Dropout2d(0.25)]
            local block = { nn.Conv2d(in_filters, out_filters, 3, 2, 1), nn.LeakyReLU(0.2, { inplace = true }),
                nn.Dropout2d(0.25) }
            if bn then
                -- block.append(nn.BatchNorm2d(out_filters, 0.8))
                block[#block + 1] = nn.BatchNorm2d(out_filters, 0.8)
            end
            return block
        end

        -- self.model = nn.Sequential(*discriminator_block(opt.channels, 16, bn=False), *discriminator_block(16, 32), ...)
        local layers = {}
        for _, b in ipairs({ discriminator_block(opt.channels, 16, false), discriminator_block(16, 32),
            discriminator_block(32, 64), discriminator_block(64, 128) }) do
            for _, l in ipairs(b) do
                layers[#layers + 1] = l
            end
        end
        self.model = nn.Sequential(unpack(layers))

        -- The height and width of downsampled image
        -- ds_size = opt.img_size // 2 ** 4
        local ds_size = math.floor(opt.img_size / 2 ^ 4)
        if sequential_adv then
            -- self.adv_layer = nn.Sequential(nn.Linear(128 * ds_size ** 2, 1))
            self.adv_layer = nn.Sequential(nn.Linear(128 * ds_size ^ 2, 1))
        else
            -- self.adv_layer = nn.Linear(128 * ds_size ** 2, 1)
            self.adv_layer = nn.Linear(128 * ds_size ^ 2, 1)
        end
    end

    function Discriminator:forward(img)
        local out = self.model(img)
        -- out = out.view(out.shape[0], -1)
        out = out:view(out.shape[1], -1)
        local validity = self.adv_layer(out)
        return validity
    end
    return Discriminator
end

-- def weights_init_normal(m):
local function weights_init_normal(m)
    -- classname = m.__class__.__name__
    local classname = m.__class__.__name__
    -- if classname.find("Conv") != -1:   (Python's str.find is -1 when absent, Lua's nil)
    if classname:find("Conv") then
        -- torch.nn.init.normal_(m.weight.data, 0.0, 0.02)
        tide.nn.init.normal_(m.weight.data, 0.0, 0.02)
    -- elif classname.find("BatchNorm") != -1:
    elseif classname:find("BatchNorm") then
        tide.nn.init.normal_(m.weight.data, 1.0, 0.02)
        -- torch.nn.init.constant_(m.bias.data, 0.0)
        tide.nn.init.constant_(m.bias.data, 0.0)
    end
end

---------------------------------------------------------------------------------------------
-- the legacy type forms the scripts use
---------------------------------------------------------------------------------------------
describe("PyTorch-GAN's Tensor / Variable / imgs.type(Tensor) forms", function()
    it("imgs.type(Tensor) takes a constructor; torch.cuda.FloatTensor without CUDA raises", function()
        local imgs = tide.ones(2, 3, { dtype = tide.float64 })
        -- real_imgs = Variable(imgs.type(Tensor))
        local real_imgs = Variable(imgs:type(Tensor))
        assert.are.equal("torch.FloatTensor", real_imgs:type())
        assert.are.equal(tide.float32, real_imgs.dtype)
        -- labels.type(torch.LongTensor), .type(torch.DoubleTensor) (the same tensor when it has the dtype)
        assert.are.equal(tide.int64, imgs:type(tide.LongTensor).dtype)
        assert.are.equal(imgs, imgs:type(tide.DoubleTensor))
        -- a function that is no tensor type names itself in the error, leaving the tensor as it was
        assert.has_error(function() imgs:type(print) end,
            "tide: type: expected a type name such as \"torch.FloatTensor\", a dtype name or a " ..
            "constructor such as tide.FloatTensor, got a function that is no tensor type")
        assert.are.equal(tide.float64, imgs.dtype)
        -- torch.cuda.FloatTensor / LongTensor ... exist; called without CUDA they raise as PyTorch's do
        assert.is_function(tide.cuda.FloatTensor)
        assert.is_function(tide.cuda.LongTensor)
        if not tide.cuda.is_available() then
            local ok, err = pcall(tide.cuda.FloatTensor, 2, 1)
            assert.is_false(ok)
            assert.is_truthy(tostring(err):find("tide: cuda.FloatTensor: CUDA is not available here", 1, true))
            ok, err = pcall(imgs.type, imgs, tide.cuda.FloatTensor)
            assert.is_false(ok)
            assert.are.equal(tide.float64, imgs.dtype)
        else
            assert.are.equal("torch.cuda.FloatTensor", tide.cuda.FloatTensor(2, 1):type())
            assert.are.equal("torch.cuda.FloatTensor", imgs:type(tide.cuda.FloatTensor):type())
            assert.are.equal("torch.cuda.LongTensor", tide.cuda.LongTensor({ 1, 2 }):type())
            assert.has_error(function() tide.cuda.FloatTensor(2, { device = "cpu" }) end)
        end
        -- valid = Variable(Tensor(imgs.shape[0], 1).fill_(1.0), requires_grad=False)
        local valid = Variable(Tensor(imgs.shape[1], 1):fill_(1.0), { requires_grad = false })
        assert.are.same({ 2, 1 }, valid.shape)
        assert.is_false(valid.requires_grad)
        assert.are.equal(2, valid:sum():item())
    end)
end)

---------------------------------------------------------------------------------------------
-- 1. implementations/began/began.py
---------------------------------------------------------------------------------------------
describe("PyTorch-GAN began.py", function()
    it("BEGAN: autoencoder discriminator, k_t balance update, convergence measure M", function()
        tide.manual_seed(0)
        local opt = { n_epochs = 1, batch_size = 4, lr = 0.0002, b1 = 0.5, b2 = 0.999, latent_dim = 8,
            img_size = 16, channels = 1, sample_interval = 400 }
        -- img_shape = (opt.channels, opt.img_size, opt.img_size)
        local img_shape = { opt.channels, opt.img_size, opt.img_size }

        local Generator = make_generator(opt, true)

        local Discriminator = nn.Module:extend("Discriminator")
        function Discriminator:init()
            -- Upsampling
            -- self.down = nn.Sequential(nn.Conv2d(opt.channels, 64, 3, 2, 1), nn.ReLU())
            self.down = nn.Sequential(nn.Conv2d(opt.channels, 64, 3, 2, 1), nn.ReLU())
            -- Fully-connected layers
            -- self.down_size = opt.img_size // 2
            self.down_size = math.floor(opt.img_size / 2)
            -- down_dim = 64 * (opt.img_size // 2) ** 2
            local down_dim = 64 * math.floor(opt.img_size / 2) ^ 2
            self.fc = nn.Sequential(
                nn.Linear(down_dim, 32),
                nn.BatchNorm1d(32, 0.8),
                -- nn.ReLU(inplace=True),
                nn.ReLU({ inplace = true }),
                nn.Linear(32, down_dim),
                nn.BatchNorm1d(down_dim),
                nn.ReLU({ inplace = true })
            )
            -- Upsampling
            -- self.up = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(64, opt.channels, 3, 1, 1))
            self.up = nn.Sequential(nn.Upsample({ scale_factor = 2 }), nn.Conv2d(64, opt.channels, 3, 1, 1))
        end

        function Discriminator:forward(img)
            local out = self.down(img)
            -- out = self.fc(out.view(out.size(0), -1))
            out = self.fc(out:view(out:size(1), -1))
            -- out = self.up(out.view(out.size(0), 64, self.down_size, self.down_size))
            out = self.up(out:view(out:size(1), 64, self.down_size, self.down_size))
            return out
        end

        -- Initialize generator and discriminator
        local generator = Generator()
        local discriminator = Discriminator()
        if cuda then
            generator:cuda()
            discriminator:cuda()
        end
        -- Initialize weights
        generator:apply(weights_init_normal)
        discriminator:apply(weights_init_normal)
        -- the BatchNorm2d(128) of the generator: weight ~ N(1, 0.02), bias 0
        assert.are.equal(0, generator.conv_blocks[1].bias:abs():sum():item())
        assert.is_true(math.abs(generator.conv_blocks[1].weight:mean():item() - 1) < 0.02)

        local dataloader = mnist_loader(opt, 8)

        -- Optimizers
        -- optimizer_G = torch.optim.Adam(generator.parameters(), lr=opt.lr, betas=(opt.b1, opt.b2))
        local optimizer_G = tide.optim.Adam(generator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })
        local optimizer_D = tide.optim.Adam(discriminator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })

        -- BEGAN hyper parameters
        local gamma = 0.75
        local lambda_k = 0.001
        local k = 0.0
        local lines, Ms, ks, saved = {}, {}, {}, 0

        -- for epoch in range(opt.n_epochs):
        for epoch = 0, opt.n_epochs - 1 do
            -- for i, (imgs, _) in enumerate(dataloader):   (enumerate(0): Python numbers from 0)
            for i, imgs, _ in dataloader:enumerate(0) do
                -- Configure input
                -- real_imgs = Variable(imgs.type(Tensor))
                local real_imgs = Variable(imgs:type(Tensor))

                --  Train Generator
                optimizer_G:zero_grad()
                -- Sample noise as generator input
                -- z = Variable(Tensor(np.random.normal(0, 1, (imgs.shape[0], opt.latent_dim))))
                local z = Variable(Tensor(tide.normal(0, 1, { imgs.shape[1], opt.latent_dim })))
                -- Generate a batch of images
                local gen_imgs = generator(z)
                assert.are.same({ opt.batch_size, unpack(img_shape) }, gen_imgs.shape)
                -- Loss measures generator's ability to fool the discriminator
                -- g_loss = torch.mean(torch.abs(discriminator(gen_imgs) - gen_imgs))
                local g_loss = tide.mean(tide.abs(discriminator(gen_imgs) - gen_imgs))

                g_loss:backward()
                local g0, d0 = snapshot(generator), snapshot(discriminator)
                optimizer_G:step()
                assert.is_true(changed(generator, g0))
                assert.is_false(changed(discriminator, d0))

                --  Train Discriminator
                optimizer_D:zero_grad()
                -- Measure discriminator's ability to classify real from generated samples
                local d_real = discriminator(real_imgs)
                -- d_fake = discriminator(gen_imgs.detach())
                local d_fake = discriminator(gen_imgs:detach())
                assert.are.same(real_imgs.shape, d_real.shape)

                -- d_loss_real = torch.mean(torch.abs(d_real - real_imgs))
                local d_loss_real = tide.mean(tide.abs(d_real - real_imgs))
                local d_loss_fake = tide.mean(tide.abs(d_fake - gen_imgs:detach()))
                local d_loss = d_loss_real - k * d_loss_fake

                d_loss:backward()
                g0, d0 = snapshot(generator), snapshot(discriminator)
                optimizer_D:step()
                assert.is_true(changed(discriminator, d0))
                assert.is_false(changed(generator, g0))

                -- Update weights
                -- diff = torch.mean(gamma * d_loss_real - d_loss_fake)
                local diff = tide.mean(gamma * d_loss_real - d_loss_fake)
                -- Update weight term for fake samples
                k = k + lambda_k * diff:item()
                -- k = min(max(k, 0), 1)  # Constraint to interval [0, 1]
                k = math.min(math.max(k, 0), 1)
                -- Update convergence metric
                -- M = (d_loss_real + torch.abs(diff)).data[0]
                -- (PyTorch 1.13 itself raises on .data[0] of a 0-dim tensor: "invalid index of a
                -- 0-dim tensor. Use `tensor.item()`"; the script's line is written with .item())
                local M = (d_loss_real + tide.abs(diff)).data:item()
                Ms[#Ms + 1], ks[#ks + 1] = M, k

                -- print("[Epoch %d/%d] [Batch %d/%d] [D loss: %f] [G loss: %f] -- M: %f, k: %f" % (...))
                lines[#lines + 1] = string.format("[Epoch %d/%d] [Batch %d/%d] [D loss: %f] [G loss: %f] -- M: %f, k: %f",
                    epoch, opt.n_epochs, i, dataloader:len(), d_loss:item(), g_loss:item(), M, k)
                assert_finite(d_loss:item(), "d_loss")
                assert_finite(g_loss:item(), "g_loss")

                -- batches_done = epoch * len(dataloader) + i
                local batches_done = epoch * dataloader:len() + i
                if batches_done % opt.sample_interval == 0 then
                    -- save_image(gen_imgs.data[:25], "images/%d.png" % batches_done, nrow=5, normalize=True)
                    local path = os.tmpname() .. string.format("_%d.png", batches_done)
                    tide.utils.save_image(gen_imgs.data[{ { 1, 25 } }], path, { nrow = 5, normalize = true })
                    assert.is_truthy(io.open(path, "rb"))
                    os.remove(path)
                    saved = saved + 1
                end
            end
        end
        assert.are.equal(1, saved)
        assert.are.equal(2, #lines)
        assert.is_truthy(lines[2]:find("[Batch 1/2]", 1, true))
        for j = 1, 2 do
            assert_finite(Ms[j], "M")
            assert.is_true(Ms[j] > 0)
            assert.is_true(ks[j] >= 0 and ks[j] <= 1)
        end

        -- the k and M update against PyTorch 1.13 on fixed losses
        local d_loss_real, d_loss_fake = tide.tensor(0.4), tide.tensor(0.7)
        local diff = tide.mean(gamma * d_loss_real - d_loss_fake)
        local k2 = math.min(math.max(0.0 + lambda_k * diff:item(), 0), 1)
        assert.are.equal(0, k2)
        -- torch: (d_loss_real + torch.abs(diff)).item() = 0.7999999523162842
        assert.is_true(close((d_loss_real + tide.abs(diff)):item(), 0.7999999523162842, 1e-6))
        -- the script's .data[0] on the 0-dim result raises, as PyTorch 1.13's IndexError does
        assert.has_error(function() return (d_loss_real + tide.abs(diff)).data[1] end,
            "tide: index: a 0-d tensor has no dim to index with 1; its value is t:item()")
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. implementations/lsgan/lsgan.py
---------------------------------------------------------------------------------------------
describe("PyTorch-GAN lsgan.py", function()
    it("LSGAN: MSELoss against valid/fake targets, 0.5 * (real_loss + fake_loss)", function()
        tide.manual_seed(1)
        local opt = { n_epochs = 1, batch_size = 4, lr = 0.0002, b1 = 0.5, b2 = 0.999, latent_dim = 10,
            img_size = 16, channels = 1, sample_interval = 1000 }
        local Generator = make_generator(opt, false)
        local Discriminator = make_discriminator(opt, false)

        -- !!! Minimizes MSE instead of BCE
        -- adversarial_loss = torch.nn.MSELoss()
        local adversarial_loss = tide.nn.MSELoss()

        local generator = Generator()
        local discriminator = Discriminator()
        if cuda then
            generator:cuda()
            discriminator:cuda()
            adversarial_loss:cuda()
        end
        generator:apply(weights_init_normal)
        discriminator:apply(weights_init_normal)
        assert.are.equal("Linear", discriminator.adv_layer.__class__.__name__)

        local dataloader = mnist_loader(opt, 8)
        local optimizer_G = tide.optim.Adam(generator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })
        local optimizer_D = tide.optim.Adam(discriminator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })

        local d_losses = {}
        for epoch = 0, opt.n_epochs - 1 do -- luacheck: ignore epoch
            for i, imgs, _ in dataloader:enumerate(0) do -- luacheck: ignore i
                -- Adversarial ground truths
                -- valid = Variable(Tensor(imgs.shape[0], 1).fill_(1.0), requires_grad=False)
                local valid = Variable(Tensor(imgs.shape[1], 1):fill_(1.0), { requires_grad = false })
                local fake = Variable(Tensor(imgs.shape[1], 1):fill_(0.0), { requires_grad = false })
                local real_imgs = Variable(imgs:type(Tensor))

                optimizer_G:zero_grad()
                local z = Variable(Tensor(tide.normal(0, 1, { imgs.shape[1], opt.latent_dim })))
                local gen_imgs = generator(z)
                -- g_loss = adversarial_loss(discriminator(gen_imgs), valid)
                local g_loss = adversarial_loss(discriminator(gen_imgs), valid)
                g_loss:backward()
                local g0, d0 = snapshot(generator), snapshot(discriminator)
                optimizer_G:step()
                assert.is_true(changed(generator, g0))
                assert.is_false(changed(discriminator, d0))

                optimizer_D:zero_grad()
                local real_loss = adversarial_loss(discriminator(real_imgs), valid)
                local fake_loss = adversarial_loss(discriminator(gen_imgs:detach()), fake)
                local d_loss = 0.5 * (real_loss + fake_loss)
                d_loss:backward()
                g0, d0 = snapshot(generator), snapshot(discriminator)
                optimizer_D:step()
                assert.is_true(changed(discriminator, d0))
                assert.is_false(changed(generator, g0))
                assert_finite(d_loss:item(), "d_loss")
                assert_finite(g_loss:item(), "g_loss")
                d_losses[#d_losses + 1] = d_loss:item()
            end
        end
        assert.are.equal(2, #d_losses)

        -- the LSGAN discriminator loss against PyTorch 1.13 on fixed predictions
        local d_real = tide.tensor({ { 0.3 }, { -1.2 }, { 0.8 } })
        local d_fake = tide.tensor({ { -0.5 }, { 0.1 }, { 2.0 } })
        local valid = Tensor(3, 1):fill_(1.0)
        local fake = Tensor(3, 1):fill_(0.0)
        local d_loss = 0.5 * (adversarial_loss(d_real, valid) + adversarial_loss(d_fake, fake))
        assert.is_true(close(d_loss:item(), 1.6050000190734863, 1e-6))
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. implementations/relativistic_gan/relativistic_gan.py
---------------------------------------------------------------------------------------------
describe("PyTorch-GAN relativistic_gan.py", function()
    it("RaGAN: BCEWithLogitsLoss on real_pred - fake_pred.mean(0, keepdim=True)", function()
        tide.manual_seed(2)
        local opt = { n_epochs = 1, batch_size = 4, lr = 0.0002, b1 = 0.5, b2 = 0.999, latent_dim = 10,
            img_size = 16, channels = 1, sample_interval = 400, rel_avg_gan = true }
        -- device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        local device = tide.device(tide.cuda.is_available() and "cuda" or "cpu")
        local Generator = make_generator(opt, true)
        local Discriminator = make_discriminator(opt, true)

        -- adversarial_loss = torch.nn.BCEWithLogitsLoss().to(device)
        local adversarial_loss = tide.nn.BCEWithLogitsLoss():to(device)
        -- generator = Generator().to(device)
        local generator = Generator():to(device)
        local discriminator = Discriminator():to(device)
        local dataloader = mnist_loader(opt, 8)
        local optimizer_G = tide.optim.Adam(generator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })
        local optimizer_D = tide.optim.Adam(discriminator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })
        -- Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
        local Tensor_ = tide.cuda.is_available() and tide.cuda.FloatTensor or tide.FloatTensor

        for _, rel_avg_gan in ipairs({ true, false }) do
            opt.rel_avg_gan = rel_avg_gan
            for epoch = 0, opt.n_epochs - 1 do -- luacheck: ignore epoch
                for i, imgs, _ in dataloader:enumerate(0) do -- luacheck: ignore i
                    local valid = Variable(Tensor_(imgs.shape[1], 1):fill_(1.0), { requires_grad = false })
                    local fake = Variable(Tensor_(imgs.shape[1], 1):fill_(0.0), { requires_grad = false })
                    local real_imgs = Variable(imgs:type(Tensor_))

                    optimizer_G:zero_grad()
                    local z = Variable(Tensor_(tide.normal(0, 1, { imgs.shape[1], opt.latent_dim })))
                    local gen_imgs = generator(z)

                    -- real_pred = discriminator(real_imgs).detach()
                    local real_pred = discriminator(real_imgs):detach()
                    local fake_pred = discriminator(gen_imgs)
                    local g_loss
                    if opt.rel_avg_gan then
                        -- g_loss = adversarial_loss(fake_pred - real_pred.mean(0, keepdim=True), valid)
                        g_loss = adversarial_loss(fake_pred - real_pred:mean(1, { keepdim = true }), valid)
                    else
                        g_loss = adversarial_loss(fake_pred - real_pred, valid)
                    end
                    assert_finite(g_loss:item(), "relativistic g_loss")
                    -- Loss measures generator's ability to fool the discriminator
                    -- (the script then overwrites it with the standard loss, as here)
                    g_loss = adversarial_loss(discriminator(gen_imgs), valid)

                    g_loss:backward()
                    local g0, d0 = snapshot(generator), snapshot(discriminator)
                    optimizer_G:step()
                    assert.is_true(changed(generator, g0))
                    assert.is_false(changed(discriminator, d0))

                    optimizer_D:zero_grad()
                    -- Predict validity
                    real_pred = discriminator(real_imgs)
                    fake_pred = discriminator(gen_imgs:detach())
                    local real_loss, fake_loss
                    if opt.rel_avg_gan then
                        real_loss = adversarial_loss(real_pred - fake_pred:mean(1, { keepdim = true }), valid)
                        fake_loss = adversarial_loss(fake_pred - real_pred:mean(1, { keepdim = true }), fake)
                    else
                        real_loss = adversarial_loss(real_pred - fake_pred, valid)
                        fake_loss = adversarial_loss(fake_pred - real_pred, fake)
                    end
                    local d_loss = (real_loss + fake_loss) / 2
                    d_loss:backward()
                    g0, d0 = snapshot(generator), snapshot(discriminator)
                    optimizer_D:step()
                    assert.is_true(changed(discriminator, d0))
                    assert.is_false(changed(generator, g0))
                    assert_finite(d_loss:item(), "d_loss")
                end
            end
        end

        -- the relativistic (average) discriminator losses against PyTorch 1.13
        local real_pred = tide.tensor({ { 0.3 }, { -1.2 }, { 0.8 } })
        local fake_pred = tide.tensor({ { -0.5 }, { 0.1 }, { 2.0 } })
        local valid, fake = tide.ones(3, 1), tide.zeros(3, 1)
        local ra = (adversarial_loss(real_pred - fake_pred:mean(1, { keepdim = true }), valid)
            + adversarial_loss(fake_pred - real_pred:mean(1, { keepdim = true }), fake)) / 2
        assert.is_true(close(ra:item(), 1.1144158840179443, 1e-6))
        local rs = (adversarial_loss(real_pred - fake_pred, valid) + adversarial_loss(fake_pred - real_pred, fake)) / 2
        assert.is_true(close(rs:item(), 1.125130534172058, 1e-6))
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. implementations/softmax_gan/softmax_gan.py
---------------------------------------------------------------------------------------------
describe("PyTorch-GAN softmax_gan.py", function()
    it("Softmax GAN: the partition function Z, d_loss.backward(retain_graph=True)", function()
        tide.manual_seed(3)
        local opt = { n_epochs = 1, batch_size = 4, lr = 0.0002, b1 = 0.5, b2 = 0.999, latent_dim = 10,
            img_size = 16, channels = 1, sample_interval = 400 }
        -- img_shape = (opt.channels, opt.img_size, opt.img_size)
        local img_shape = { opt.channels, opt.img_size, opt.img_size }

        local Generator = nn.Module:extend("Generator")
        function Generator:init()
            -- def block(in_feat, out_feat, normalize=True):
            local function block(in_feat, out_feat, normalize)
                if normalize == nil then normalize = true end
                local layers = { nn.Linear(in_feat, out_feat) }
                if normalize then
                    -- layers.append(nn.BatchNorm1d(out_feat, 0.8))
                    layers[#layers + 1] = nn.BatchNorm1d(out_feat, 0.8)
                end
                layers[#layers + 1] = nn.LeakyReLU(0.2, { inplace = true })
                return layers
            end
            -- self.model = nn.Sequential(*block(opt.latent_dim, 128, normalize=False), *block(128, 256),
            --     *block(256, 512), *block(512, 1024), nn.Linear(1024, int(np.prod(img_shape))), nn.Tanh())
            local layers = {}
            for _, b in ipairs({ block(opt.latent_dim, 128, false), block(128, 256), block(256, 512),
                block(512, 1024) }) do
                for _, l in ipairs(b) do
                    layers[#layers + 1] = l
                end
            end
            -- int(np.prod(img_shape))
            layers[#layers + 1] = nn.Linear(1024, tide.tensor(img_shape):prod():item())
            layers[#layers + 1] = nn.Tanh()
            self.model = nn.Sequential(unpack(layers))
        end

        function Generator:forward(z)
            local img = self.model(z)
            -- img = img.view(img.shape[0], *img_shape)
            img = img:view(img.shape[1], unpack(img_shape))
            return img
        end

        local Discriminator = nn.Module:extend("Discriminator")
        function Discriminator:init()
            self.model = nn.Sequential(
                -- nn.Linear(opt.img_size ** 2, 512),
                nn.Linear(opt.img_size ^ 2, 512),
                nn.LeakyReLU(0.2, { inplace = true }),
                nn.Linear(512, 256),
                nn.LeakyReLU(0.2, { inplace = true }),
                nn.Linear(256, 1)
            )
        end

        function Discriminator:forward(img)
            -- img_flat = img.view(img.shape[0], -1)
            local img_flat = img:view(img.shape[1], -1)
            local validity = self.model(img_flat)
            return validity
        end

        -- adversarial_loss = torch.nn.BCELoss()   (defined, unused by the script)
        local adversarial_loss = tide.nn.BCELoss() -- luacheck: ignore adversarial_loss
        local generator = Generator()
        local discriminator = Discriminator()
        local dataloader = mnist_loader(opt, 8)
        local optimizer_G = tide.optim.Adam(generator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })
        local optimizer_D = tide.optim.Adam(discriminator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })

        -- def log(x): return torch.log(x + 1e-8)
        local function log(x)
            return tide.log(x + 1e-8)
        end

        for epoch = 0, opt.n_epochs - 1 do -- luacheck: ignore epoch
            for i, imgs, _ in dataloader:enumerate(0) do -- luacheck: ignore i
                optimizer_G:zero_grad()
                optimizer_D:zero_grad()

                local batch_size = imgs.shape[1]
                -- Adversarial ground truths
                local g_target = 1 / (batch_size * 2)
                local d_target = 1 / batch_size

                local real_imgs = Variable(imgs:type(Tensor))
                local z = Variable(Tensor(tide.normal(0, 1, { imgs.shape[1], opt.latent_dim })))
                local gen_imgs = generator(z)
                assert.are.same({ batch_size, unpack(img_shape) }, gen_imgs.shape)

                local d_real = discriminator(real_imgs)
                local d_fake = discriminator(gen_imgs)

                -- Partition function
                -- Z = torch.sum(torch.exp(-d_real)) + torch.sum(torch.exp(-d_fake))
                local Z = tide.sum(tide.exp(-d_real)) + tide.sum(tide.exp(-d_fake))

                -- Calculate loss of discriminator and update
                -- d_loss = d_target * torch.sum(d_real) + log(Z)
                local d_loss = d_target * tide.sum(d_real) + log(Z)
                -- d_loss.backward(retain_graph=True)
                d_loss:backward({ retain_graph = true })
                local g0, d0 = snapshot(generator), snapshot(discriminator)
                optimizer_D:step()
                assert.is_true(changed(discriminator, d0))
                assert.is_false(changed(generator, g0))

                -- Calculate loss of generator and update
                -- g_loss = g_target * (torch.sum(d_real) + torch.sum(d_fake)) + log(Z)
                local g_loss = g_target * (tide.sum(d_real) + tide.sum(d_fake)) + log(Z)
                -- g_loss.backward()
                -- PyTorch 1.13 raises here too: optimizer_D.step() changed D's weights in place,
                -- which the retained graph needs ("one of the variables needed for gradient
                -- computation has been modified by an inplace operation")
                local ok, err = pcall(function() g_loss:backward() end)
                assert.is_false(ok)
                assert.is_truthy(tostring(err):find("was modified in place after it was used", 1, true))
                -- the repair: d_real, d_fake and Z again through the stepped discriminator
                optimizer_G:zero_grad()
                d_real = discriminator(real_imgs)
                d_fake = discriminator(gen_imgs)
                Z = tide.sum(tide.exp(-d_real)) + tide.sum(tide.exp(-d_fake))
                g_loss = g_target * (tide.sum(d_real) + tide.sum(d_fake)) + log(Z)
                g_loss:backward()
                g0, d0 = snapshot(generator), snapshot(discriminator)
                optimizer_G:step()
                assert.is_true(changed(generator, g0))
                assert.is_false(changed(discriminator, d0))
                assert_finite(d_loss:item(), "d_loss")
                assert_finite(g_loss:item(), "g_loss")
            end
        end

        -- the softmax GAN losses against PyTorch 1.13 on fixed discriminator outputs
        local d_real = tide.tensor({ { 0.3 }, { -1.2 }, { 0.8 } })
        local d_fake = tide.tensor({ { -0.5 }, { 0.1 }, { 2.0 } })
        local batch_size = 3
        local g_target, d_target = 1 / (batch_size * 2), 1 / batch_size
        local Z = tide.sum(tide.exp(-d_real)) + tide.sum(tide.exp(-d_fake))
        assert.is_true(close((d_target * tide.sum(d_real) + log(Z)):item(), 1.9406306743621826, 1e-6))
        assert.is_true(close((g_target * (tide.sum(d_real) + tide.sum(d_fake)) + log(Z)):item(),
            2.223963975906372, 1e-6))
    end)
end)

---------------------------------------------------------------------------------------------
-- 5. implementations/stargan/models.py and stargan.py
---------------------------------------------------------------------------------------------
describe("PyTorch-GAN stargan", function()
    -- models.py
    local function weights_init_normal_sg(m)
        local classname = m.__class__.__name__
        if classname:find("Conv") then
            tide.nn.init.normal_(m.weight.data, 0.0, 0.02)
        end
    end

    -- class ResidualBlock(nn.Module):
    local ResidualBlock = nn.Module:extend("ResidualBlock")
    function ResidualBlock:init(in_features)
        local conv_block = {
            -- nn.Conv2d(in_features, in_features, 3, stride=1, padding=1, bias=False),
            nn.Conv2d(in_features, in_features, 3, { stride = 1, padding = 1, bias = false }),
            -- nn.InstanceNorm2d(in_features, affine=True, track_running_stats=True),
            nn.InstanceNorm2d(in_features, { affine = true, track_running_stats = true }),
            nn.ReLU({ inplace = true }),
            nn.Conv2d(in_features, in_features, 3, { stride = 1, padding = 1, bias = false }),
            nn.InstanceNorm2d(in_features, { affine = true, track_running_stats = true }),
        }
        -- self.conv_block = nn.Sequential(*conv_block)
        self.conv_block = nn.Sequential(unpack(conv_block))
    end

    function ResidualBlock:forward(x)
        return x + self.conv_block(x)
    end

    -- class GeneratorResNet(nn.Module): def __init__(self, img_shape=(3, 128, 128), res_blocks=9, c_dim=5):
    local GeneratorResNet = nn.Module:extend("GeneratorResNet")
    nn.signature(GeneratorResNet, "img_shape=(3, 128, 128), res_blocks=9, c_dim=5")
    function GeneratorResNet:init(img_shape, res_blocks, c_dim)
        -- channels, img_size, _ = img_shape
        local channels, img_size, _ = unpack(img_shape) -- luacheck: ignore img_size

        -- Initial convolution block
        local model = {
            nn.Conv2d(channels + c_dim, 64, 7, { stride = 1, padding = 3, bias = false }),
            nn.InstanceNorm2d(64, { affine = true, track_running_stats = true }),
            nn.ReLU({ inplace = true }),
        }
        -- model += [...] (Python's list +=)
        local function extend(t)
            for _, l in ipairs(t) do
                model[#model + 1] = l
            end
        end

        -- Downsampling
        local curr_dim = 64
        for _ = 1, 2 do
            extend({
                nn.Conv2d(curr_dim, curr_dim * 2, 4, { stride = 2, padding = 1, bias = false }),
                nn.InstanceNorm2d(curr_dim * 2, { affine = true, track_running_stats = true }),
                nn.ReLU({ inplace = true }),
            })
            curr_dim = curr_dim * 2
        end

        -- Residual blocks
        for _ = 1, res_blocks do
            extend({ ResidualBlock(curr_dim) })
        end

        -- Upsampling
        for _ = 1, 2 do
            extend({
                -- nn.ConvTranspose2d(curr_dim, curr_dim // 2, 4, stride=2, padding=1, bias=False),
                nn.ConvTranspose2d(curr_dim, math.floor(curr_dim / 2), 4, { stride = 2, padding = 1, bias = false }),
                nn.InstanceNorm2d(math.floor(curr_dim / 2), { affine = true, track_running_stats = true }),
                nn.ReLU({ inplace = true }),
            })
            curr_dim = math.floor(curr_dim / 2)
        end

        -- Output layer
        -- model += [nn.Conv2d(curr_dim, channels, 7, stride=1, padding=3), nn.Tanh()]
        extend({ nn.Conv2d(curr_dim, channels, 7, { stride = 1, padding = 3 }), nn.Tanh() })

        self.model = nn.Sequential(unpack(model))
    end

    function GeneratorResNet:forward(x, c)
        -- c = c.view(c.size(0), c.size(1), 1, 1)
        c = c:view(c:size(1), c:size(2), 1, 1)
        -- c = c.repeat(1, 1, x.size(2), x.size(3))   (repeat is a Lua keyword: c:repeat does not parse)
        c = c["repeat"](c, 1, 1, x:size(3), x:size(4))
        -- x = torch.cat((x, c), 1)
        x = tide.cat({ x, c }, 2)
        return self.model(x)
    end

    -- class Discriminator(nn.Module): def __init__(self, img_shape=(3, 128, 128), c_dim=5, n_strided=6):
    local Discriminator = nn.Module:extend("Discriminator")
    nn.signature(Discriminator, "img_shape=(3, 128, 128), c_dim=5, n_strided=6")
    function Discriminator:init(img_shape, c_dim, n_strided)
        local channels, img_size, _ = unpack(img_shape)

        local function discriminator_block(in_filters, out_filters)
            -- Returns downsampling layers of each discriminator block
            -- layers = [nn.Conv2d(in_filters, out_filters, 4, stride=2, padding=1), nn.LeakyReLU(0.01)]
            local layers = { nn.Conv2d(in_filters, out_filters, 4, { stride = 2, padding = 1 }), nn.LeakyReLU(0.01) }
            return layers
        end

        local layers = discriminator_block(channels, 64)
        local curr_dim = 64
        -- for _ in range(n_strided - 1):
        for _ = 1, n_strided - 1 do
            -- layers.extend(discriminator_block(curr_dim, curr_dim * 2))
            for _, l in ipairs(discriminator_block(curr_dim, curr_dim * 2)) do
                layers[#layers + 1] = l
            end
            curr_dim = curr_dim * 2
        end

        self.model = nn.Sequential(unpack(layers))

        -- Output 1: PatchGAN
        -- self.out1 = nn.Conv2d(curr_dim, 1, 3, padding=1, bias=False)
        self.out1 = nn.Conv2d(curr_dim, 1, 3, { padding = 1, bias = false })
        -- Output 2: Class prediction
        -- kernel_size = img_size // 2 ** n_strided
        local kernel_size = math.floor(img_size / 2 ^ n_strided)
        -- self.out2 = nn.Conv2d(curr_dim, c_dim, kernel_size, bias=False)
        self.out2 = nn.Conv2d(curr_dim, c_dim, kernel_size, { bias = false })
    end

    function Discriminator:forward(img)
        local feature_repr = self.model(img)
        local out_adv = self.out1(feature_repr)
        local out_cls = self.out2(feature_repr)
        -- return out_adv, out_cls.view(out_cls.size(0), -1)
        return out_adv, out_cls:view(out_cls:size(1), -1)
    end

    it("models.py: the condition label tiled over the image, out_adv and out_cls", function()
        tide.manual_seed(4)
        local img_shape = { 3, 16, 16 }
        -- generator = GeneratorResNet(img_shape=img_shape, res_blocks=opt.residual_blocks, c_dim=c_dim)
        local generator = GeneratorResNet({ img_shape = img_shape, res_blocks = 1, c_dim = 5 })
        -- discriminator = Discriminator(img_shape=img_shape, c_dim=c_dim)   (n_strided for a 16x16 image)
        local discriminator = Discriminator({ img_shape = img_shape, c_dim = 5, n_strided = 3 })
        local x = tide.randn(2, 3, 16, 16)
        local c = tide.tensor({ { 1, 0, 0, 1, 1 }, { 0, 1, 0, 0, 1 } }, { dtype = tide.float32 })
        -- the conditioning: c.view(c.size(0), c.size(1), 1, 1).repeat(1, 1, x.size(2), x.size(3))
        local cv = c:view(c:size(1), c:size(2), 1, 1)
        local cc = cv["repeat"](cv, 1, 1, x:size(3), x:size(4))
        assert.are.same({ 2, 5, 16, 16 }, cc.shape)
        assert.are.equal(c[{ 2, 5 }]:item(), cc[{ 2, 5, 7, 9 }]:item())
        assert.are.equal(0, cc[{ 1, 2 }]:abs():sum():item())
        local y = generator(x, c)
        assert.are.same({ 2, 3, 16, 16 }, y.shape)
        assert.is_true(y:abs():max():item() <= 1)
        local out_adv, out_cls = discriminator(y)
        assert.are.same({ 2, 1, 2, 2 }, out_adv.shape)
        assert.are.same({ 2, 5 }, out_cls.shape)
        -- Tensor.repeat as x["repeat"](x, ...): PyTorch's, at least one repeat per dim
        assert.are.same({ 2, 10 }, c["repeat"](c, 1, 2).shape)
        assert.are.same({ 3, 2, 5 }, c["repeat"](c, { 3, 1, 1 }).shape)
        assert.has_error(function() c["repeat"](c, 2) end, "tide: repeat: 1 repeats for a tensor " ..
            "of 2 dims; PyTorch's repeat takes at least one per dim (x:tile(...) pads leading 1s)")
        -- (fuzz seed 2) an infinite repeat is no integer, a negative one names itself
        assert.has_error(function() c["repeat"](c, { -1 / 0, 1 }) end, "tide: repeat: repeat 1 " ..
            "must be an integer, got -inf; x[\"repeat\"](x, 2, 1) or x[\"repeat\"](x, {2, 1})")
        assert.has_error(function() c["repeat"](c, -2, 1) end,
            "tide: repeat: repeat 1 is -2; repeats must be >= 0")

        -- stargan.py's sample_images (val_dataloader's batch of 10 made 2, saved to a temporary file)
        local c_dim = 5
        local label_changes = {
            { { 0, 1 }, { 1, 0 }, { 2, 0 } }, -- Set to black hair
            { { 0, 0 }, { 1, 1 }, { 2, 0 } }, -- Set to blonde hair
            { { 0, 0 }, { 1, 0 }, { 2, 1 } }, -- Set to brown hair
            { { 3, -1 } }, -- Flip gender
            { { 4, -1 } }, -- Age flip
        }
        local val_imgs, val_labels = x, c
        local img_samples = nil
        -- for i in range(10):
        for i = 1, 2 do
            -- img, label = val_imgs[i], val_labels[i]
            local img, label = val_imgs[i], val_labels[i]
            -- Repeat for number of label changes
            -- imgs = img.repeat(c_dim, 1, 1, 1)
            local imgs = img["repeat"](img, c_dim, 1, 1, 1)
            -- labels = label.repeat(c_dim, 1)
            local labels = label["repeat"](label, c_dim, 1)
            -- Make changes to labels
            -- for sample_i, changes in enumerate(label_changes):
            for sample_i, changes in ipairs(label_changes) do
                -- for col, val in changes:
                for _, cv in ipairs(changes) do
                    local col, val = cv[1] + 1, cv[2]
                    -- labels[sample_i, col] = 1 - labels[sample_i, col] if val == -1 else val
                    labels[{ sample_i, col }] = val == -1 and 1 - labels[{ sample_i, col }] or val
                end
            end
            if i == 1 then
                -- label (1, 0, 0, 1, 1): black hair set, blonde set, brown set, gender and age flipped
                assert.are.same({ 1, 0, 0, 1, 1 }, labels[1]:tolist())
                assert.are.same({ 0, 1, 0, 1, 1 }, labels[2]:tolist())
                assert.are.same({ 0, 0, 1, 1, 1 }, labels[3]:tolist())
                assert.are.same({ 1, 0, 0, 0, 1 }, labels[4]:tolist())
                assert.are.same({ 1, 0, 0, 1, 0 }, labels[5]:tolist())
            end
            -- Generate translations
            local gen_imgs = generator(imgs, labels)
            -- Concatenate images by width
            -- gen_imgs = torch.cat([x for x in gen_imgs.data], -1)
            gen_imgs = tide.cat(gen_imgs.data:unbind(), -1)
            -- img_sample = torch.cat((img.data, gen_imgs), -1)
            local img_sample = tide.cat({ img.data, gen_imgs }, -1)
            -- Add as row to generated samples
            -- img_samples = img_sample if img_samples is None else torch.cat((img_samples, img_sample), -2)
            img_samples = img_samples == nil and img_sample or tide.cat({ img_samples, img_sample }, -2)
        end
        assert.are.same({ 3, 32, 96 }, img_samples.shape)
        -- save_image(img_samples.view(1, *img_samples.shape), "images/%s.png" % batches_done, normalize=True)
        local path = os.tmpname() .. ".png"
        tide.utils.save_image(img_samples:view(1, unpack(img_samples.shape)), path, { normalize = true })
        assert.is_truthy(io.open(path, "rb"))
        os.remove(path)

        -- ResidualBlock keeps the shape; the running stats of InstanceNorm2d(track_running_stats=True)
        local rb = ResidualBlock(4)
        assert.are.same({ 1, 4, 3, 3 }, rb(tide.randn(1, 4, 3, 3)).shape)
        assert.are.same({ 4 }, rb.conv_block[2].running_mean.shape)
        -- default arguments: GeneratorResNet() is img_shape=(3, 128, 128), res_blocks=9, c_dim=5
        assert.are.equal(8, GeneratorResNet({ res_blocks = 0 }).model[1].in_channels)
    end)

    it("InstanceNorm2d(track_running_stats=True), BatchNorm1d(32, 0.8), Upsample against PyTorch", function()
        local x = tide.arange(32, { dtype = tide.float32 }):view(2, 2, 2, 4):sin()
        -- nn.InstanceNorm2d(2, affine=True, track_running_stats=True) in training, then eval
        local m = nn.InstanceNorm2d(2, { affine = true, track_running_stats = true })
        local y = m(x)
        ported.assert_close_list({ -0.1043693870306015, 1.1644567251205444, 1.2667299509048462,
            0.10842076689004898 }, y[{ 1, 1, 1 }]:tolist(), 1e-5, "instance norm")
        ported.assert_close_list({ -0.0025134312454611063, 0.0017385096289217472 }, m.running_mean:tolist(),
            1e-5, "running_mean")
        ported.assert_close_list({ 0.9517678618431091, 0.9564943313598633 }, m.running_var:tolist(), 1e-5,
            "running_var")
        m:eval()
        ported.assert_close_list({ 0.27521923184394836, -0.680332601070404, -1.0120240449905396,
            -0.414899617433548 }, m(x)[{ 2, 2, 2 }]:tolist(), 1e-5, "instance norm (eval)")
        -- nn.BatchNorm1d(3, 0.8): eps 0.8 by position
        local b = nn.BatchNorm1d(3, 0.8)
        local z = tide.arange(6, { dtype = tide.float32 }):view(2, 3):cos()
        ported.assert_close_list({ 0.7436915040016174, 0.5551431775093079, -0.36431923508644104 },
            b(z)[1]:tolist(), 1e-5, "batch norm eps 0.8")
        ported.assert_close_list({ 1.0980035066604614, 0.9712753295898438, 0.9244866371154785 },
            b.running_var:tolist(), 1e-5, "running_var")
        -- nn.Upsample(scale_factor=2): nearest
        ported.assert_close_list({ 0.0, 0.0, 0.8414709568023682, 0.8414709568023682 },
            nn.Upsample({ scale_factor = 2 })(x)[{ 1, 1, 1, { 1, 4 } }]:tolist(), 1e-6, "upsample")
    end)

    it("stargan.py: one step with criterion_cls, the gradient penalty and the reconstruction loss", function()
        tide.manual_seed(5)
        local opt = { epoch = 0, n_epochs = 1, batch_size = 2, lr = 0.0002, b1 = 0.5, b2 = 0.999,
            img_height = 16, img_width = 16, channels = 3, residual_blocks = 1, n_critic = 5,
            selected_attrs = { "Black_Hair", "Blond_Hair", "Brown_Hair", "Male", "Young" } }
        -- c_dim = len(opt.selected_attrs)
        local c_dim = #opt.selected_attrs
        local img_shape = { opt.channels, opt.img_height, opt.img_width }
        -- cuda = torch.cuda.is_available()
        local cuda_ = tide.cuda.is_available()

        -- Loss functions
        local criterion_cycle = tide.nn.L1Loss()

        -- def criterion_cls(logit, target):
        --     return F.binary_cross_entropy_with_logits(logit, target, size_average=False) / logit.size(0)
        local function criterion_cls(logit, target)
            return F.binary_cross_entropy_with_logits(logit, target, { size_average = false }) / logit:size(1)
        end

        -- Loss weights
        local lambda_cls = 1
        local lambda_rec = 10
        local lambda_gp = 10

        local generator = GeneratorResNet({ img_shape = img_shape, res_blocks = opt.residual_blocks, c_dim = c_dim })
        local discriminator = Discriminator({ img_shape = img_shape, c_dim = c_dim, n_strided = 3 })
        if cuda_ then
            generator = generator:cuda()
            discriminator = discriminator:cuda()
            criterion_cycle:cuda()
        end
        if opt.epoch ~= 0 then
            error("no saved models")
        else
            generator:apply(weights_init_normal_sg)
            discriminator:apply(weights_init_normal_sg)
        end
        local optimizer_G = tide.optim.Adam(generator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })
        local optimizer_D = tide.optim.Adam(discriminator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })

        -- CelebADataset(...): random images in [-1, 1] and 0/1 attribute labels
        local ds = tide.data.TensorDataset(tide.rand(4, 3, 16, 16) * 2 - 1,
            tide.randint(0, 2, { 4, c_dim }):float())
        -- dataloader = DataLoader(CelebADataset(...), batch_size=opt.batch_size, shuffle=True, num_workers=opt.n_cpu)
        local dataloader = tide.data.DataLoader(ds, { batch_size = opt.batch_size, shuffle = true })
        -- Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
        local Tensor_ = cuda_ and tide.cuda.FloatTensor or tide.FloatTensor

        -- def compute_gradient_penalty(D, real_samples, fake_samples):
        local function compute_gradient_penalty(D, real_samples, fake_samples)
            -- Random weight term for interpolation between real and fake samples
            -- alpha = Tensor(np.random.random((real_samples.size(0), 1, 1, 1)))
            local alpha = Tensor_(tide.rand(real_samples:size(1), 1, 1, 1))
            -- Get random interpolation between real and fake samples
            -- interpolates = (alpha * real_samples + ((1 - alpha) * fake_samples)).requires_grad_(True)
            local interpolates = (alpha * real_samples + ((1 - alpha) * fake_samples)):requires_grad_(true)
            -- d_interpolates, _ = D(interpolates)
            local d_interpolates, _ = D(interpolates)
            -- fake = Variable(Tensor(np.ones(d_interpolates.shape)), requires_grad=False)
            local fake = Variable(Tensor_(tide.ones(d_interpolates.shape)), { requires_grad = false })
            -- Get gradient w.r.t. interpolates
            -- gradients = autograd.grad(outputs=d_interpolates, inputs=interpolates, grad_outputs=fake,
            --     create_graph=True, retain_graph=True, only_inputs=True)[0]
            local gradients = tide.autograd.grad({
                outputs = d_interpolates,
                inputs = interpolates,
                grad_outputs = fake,
                create_graph = true,
                retain_graph = true,
                only_inputs = true,
            })[1]
            -- gradients = gradients.view(gradients.size(0), -1)
            gradients = gradients:view(gradients:size(1), -1)
            -- gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()
            local gradient_penalty = ((gradients:norm(2, { dim = 2 }) - 1) ^ 2):mean()
            return gradient_penalty
        end

        local n_steps, g_steps = 0, 0
        for epoch = opt.epoch, opt.n_epochs - 1 do -- luacheck: ignore epoch
            -- for i, (imgs, labels) in enumerate(dataloader):
            for i, imgs, labels in dataloader:enumerate(0) do
                -- Model inputs
                imgs = Variable(imgs:type(Tensor_))
                labels = Variable(labels:type(Tensor_))

                -- Sample labels as generator inputs
                -- sampled_c = Variable(Tensor(np.random.randint(0, 2, (imgs.size(0), c_dim))))
                local sampled_c = Variable(Tensor_(tide.randint(0, 2, { imgs:size(1), c_dim }):float()))
                -- Generate fake batch of images
                local fake_imgs = generator(imgs, sampled_c)

                --  Train Discriminator
                optimizer_D:zero_grad()
                -- Real images
                -- real_validity, pred_cls = discriminator(imgs)
                local real_validity, pred_cls = discriminator(imgs)
                -- Fake images
                local fake_validity, _ = discriminator(fake_imgs:detach())
                -- Gradient penalty
                -- gradient_penalty = compute_gradient_penalty(discriminator, imgs.data, fake_imgs.data)
                local gradient_penalty = compute_gradient_penalty(discriminator, imgs.data, fake_imgs.data)
                assert_finite(gradient_penalty:item(), "gradient_penalty")
                assert.is_true(gradient_penalty:item() >= 0)
                -- Adversarial loss
                -- loss_D_adv = -torch.mean(real_validity) + torch.mean(fake_validity) + lambda_gp * gradient_penalty
                local loss_D_adv = -tide.mean(real_validity) + tide.mean(fake_validity) + lambda_gp * gradient_penalty
                -- Classification loss
                local loss_D_cls = criterion_cls(pred_cls, labels)
                -- Total loss
                local loss_D = loss_D_adv + lambda_cls * loss_D_cls

                loss_D:backward()
                local g0, d0 = snapshot(generator), snapshot(discriminator)
                optimizer_D:step()
                assert.is_true(changed(discriminator, d0))
                assert.is_false(changed(generator, g0))

                optimizer_G:zero_grad()

                -- Every n_critic times update generator
                -- if i % opt.n_critic == 0:
                if i % opt.n_critic == 0 then
                    -- Translate and reconstruct image
                    local gen_imgs = generator(imgs, sampled_c)
                    local recov_imgs = generator(gen_imgs, labels)
                    -- Discriminator evaluates translated image
                    fake_validity, pred_cls = discriminator(gen_imgs)
                    -- Adversarial loss
                    local loss_G_adv = -tide.mean(fake_validity)
                    -- Classification loss
                    local loss_G_cls = criterion_cls(pred_cls, sampled_c)
                    -- Reconstruction loss
                    local loss_G_rec = criterion_cycle(recov_imgs, imgs)
                    -- Total loss
                    local loss_G = loss_G_adv + lambda_cls * loss_G_cls + lambda_rec * loss_G_rec

                    loss_G:backward()
                    g0, d0 = snapshot(generator), snapshot(discriminator)
                    optimizer_G:step()
                    assert.is_true(changed(generator, g0))
                    assert.is_false(changed(discriminator, d0))

                    -- sys.stdout.write("\r[Epoch %d/%d] [Batch %d/%d] [D adv: %f, aux: %f] [G loss: %f, ...]" % (...))
                    local line = string.format("\r[Epoch %d/%d] [Batch %d/%d] [D adv: %f, aux: %f] [G loss: %f, adv: %f, aux: %f, cycle: %f]",
                        epoch, opt.n_epochs, i, dataloader:len(), loss_D_adv:item(), loss_D_cls:item(), loss_G:item(),
                        loss_G_adv:item(), loss_G_cls:item(), loss_G_rec:item())
                    assert.is_truthy(line:find("[Batch 0/2]", 1, true))
                    for _, v in ipairs({ loss_G:item(), loss_G_rec:item(), loss_G_cls:item() }) do
                        assert_finite(v, "loss_G")
                    end
                end
                n_steps = n_steps + 1
                g_steps = g_steps + ((i % opt.n_critic == 0) and 1 or 0)
            end
        end
        assert.are.equal(2, n_steps)
        assert.are.equal(1, g_steps) -- i = 0 trains the generator, i = 1 does not

        -- criterion_cls and the gradient penalty's formula against PyTorch 1.13
        local logit = tide.tensor({ { 0.5, -1.0, 2.0 }, { 0.0, 1.5, -0.3 } })
        local target = tide.tensor({ { 1, 0, 1 }, { 0, 1, 1 } }, { dtype = tide.float32 })
        assert.is_true(close(criterion_cls(logit, target):item(), 1.331591248512268, 1e-6))
        local g = tide.tensor({ { 3.0, 4.0 }, { 1.0, 0.0 } }, { dtype = tide.float32 })
        assert.are.equal(8, ((g:norm(2, { dim = 2 }) - 1) ^ 2):mean():item())
    end)
end)
