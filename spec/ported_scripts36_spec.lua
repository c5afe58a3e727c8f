-- ported_scripts36_spec.lua — eriklindernoren/PyTorch-GAN ported line for line: implementations/
-- cgan/cgan.py (label_emb Embedding concatenated to the noise, MSE adversarial loss),
-- acgan/acgan.py (the two-headed discriminator, auxiliary CrossEntropy, the accuracy from
-- np.argmax), wgan_gp/wgan_gp.py (compute_gradient_penalty with autograd.grad(create_graph,
-- retain_graph, only_inputs), n_critic) and infogan/infogan.py (categorical and continuous codes,
-- to_categorical, one Adam over itertools.chain of both networks' parameters, the info loss).
-- argparse's opt is a table of the same names, MNIST random 1x16x16 images and labels; each runs
-- one or two iterations of the script's loop and checks shapes, finite losses and that each
-- optimizer step changes its own network's weights and not the other's. The Python line stands
-- above each Lua line that differs from it; dims and class labels are 1-based.
local tide = require("tide")
local nn = tide.nn
local unpack = table.unpack or unpack -- luacheck: ignore
local autograd = tide.autograd
local Variable = tide.autograd.Variable

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

-- a copy of a module's first parameter, to see which optimizer step moved which network
local function snap(m)
    return m:parameters()[1]:detach():clone()
end
local function changed(m, before)
    return not tide.equal(m:parameters()[1]:detach(), before)
end

-- cuda = True if torch.cuda.is_available() else False
local cuda = tide.cuda.is_available() and true or false
-- FloatTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor (the specs run on the cpu)
local FloatTensor = tide.FloatTensor
local LongTensor = tide.LongTensor

-- def weights_init_normal(m): (acgan's; infogan's matches "BatchNorm")
local function weights_init_normal(m)
    -- classname = m.__class__.__name__
    local classname = m.__class__.__name__
    -- if classname.find("Conv") != -1:
    if classname:find("Conv") then
        -- torch.nn.init.normal_(m.weight.data, 0.0, 0.02)
        tide.nn.init.normal_(m.weight.data, 0.0, 0.02)
    elseif classname:find("BatchNorm") then
        tide.nn.init.normal_(m.weight.data, 1.0, 0.02)
        tide.nn.init.constant_(m.bias.data, 0.0)
    end
end

---------------------------------------------------------------------------------------------
-- 1. cgan/cgan.py
---------------------------------------------------------------------------------------------
describe("PyTorch-GAN cgan.py", function()
    it("Generator with label_emb, Discriminator on cat(img, emb), MSE losses, both Adams", function()
        tide.manual_seed(0)
        local opt = { n_epochs = 1, batch_size = 4, lr = 0.0002, b1 = 0.5, b2 = 0.999,
            latent_dim = 8, n_classes = 10, img_size = 16, channels = 1, sample_interval = 400 }
        -- img_shape = (opt.channels, opt.img_size, opt.img_size)
        local img_shape = { opt.channels, opt.img_size, opt.img_size }
        local prod = opt.channels * opt.img_size * opt.img_size -- int(np.prod(img_shape))

        local Generator = nn.Module:extend("Generator")
        function Generator:init()
            self.label_emb = nn.Embedding(opt.n_classes, opt.n_classes)
            local function block(in_feat, out_feat, normalize)
                if normalize == nil then normalize = true end
                local layers = { nn.Linear(in_feat, out_feat) }
                if normalize then
                    -- layers.append(nn.BatchNorm1d(out_feat, 0.8))
                    layers[#layers + 1] = nn.BatchNorm1d(out_feat, 0.8)
                end
                -- layers.append(nn.LeakyReLU(0.2, inplace=True))
                layers[#layers + 1] = nn.LeakyReLU(0.2, { inplace = true })
                return layers
            end
            -- self.model = nn.Sequential(*block(...), *block(128, 256), ..., nn.Tanh())
            local layers = {}
            for _, b in ipairs({ block(opt.latent_dim + opt.n_classes, 128, false), block(128, 256),
                block(256, 512), block(512, 1024) }) do
                for _, l in ipairs(b) do layers[#layers + 1] = l end
            end
            layers[#layers + 1] = nn.Linear(1024, prod)
            layers[#layers + 1] = nn.Tanh()
            self.model = nn.Sequential(unpack(layers))
        end
        function Generator:forward(noise, labels)
            -- gen_input = torch.cat((self.label_emb(labels), noise), -1)
            local gen_input = tide.cat({ self.label_emb(labels), noise }, -1)
            local img = self.model(gen_input)
            -- img = img.view(img.size(0), *img_shape)
            img = img:view(img:size(1), unpack(img_shape))
            return img
        end

        local Discriminator = nn.Module:extend("Discriminator")
        function Discriminator:init()
            self.label_embedding = nn.Embedding(opt.n_classes, opt.n_classes)
            self.model = nn.Sequential(
                nn.Linear(opt.n_classes + prod, 512),
                nn.LeakyReLU(0.2, { inplace = true }),
                nn.Linear(512, 512),
                nn.Dropout(0.4),
                nn.LeakyReLU(0.2, { inplace = true }),
                nn.Linear(512, 512),
                nn.Dropout(0.4),
                nn.LeakyReLU(0.2, { inplace = true }),
                nn.Linear(512, 1)
            )
        end
        function Discriminator:forward(img, labels)
            -- d_in = torch.cat((img.view(img.size(0), -1), self.label_embedding(labels)), -1)
            local d_in = tide.cat({ img:view(img:size(1), -1), self.label_embedding(labels) }, -1)
            local validity = self.model(d_in)
            return validity
        end

        -- adversarial_loss = torch.nn.MSELoss()
        local adversarial_loss = tide.nn.MSELoss()
        local generator = Generator()
        local discriminator = Discriminator()
        if cuda then
            generator:cuda()
            discriminator:cuda()
            adversarial_loss:cuda()
        end
        -- the MNIST loader: 8 random images in [-1, 1] (Normalize([0.5], [0.5])) and labels
        local ds = tide.data.TensorDataset(tide.rand(8, 1, 16, 16) * 2 - 1,
            tide.randint(1, opt.n_classes + 1, { 8 }))
        local dataloader = tide.data.DataLoader(ds, { batch_size = opt.batch_size, shuffle = true })

        -- optimizer_G = torch.optim.Adam(generator.parameters(), lr=opt.lr, betas=(opt.b1, opt.b2))
        local optimizer_G = tide.optim.Adam(generator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })
        local optimizer_D = tide.optim.Adam(discriminator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })

        -- def sample_image(n_row, batches_done): (save_image left out)
        local function sample_image(n_row)
            -- z = Variable(FloatTensor(np.random.normal(0, 1, (n_row ** 2, opt.latent_dim))))
            local z = Variable(FloatTensor(tide.normal(0, 1, { n_row ^ 2, opt.latent_dim })))
            -- labels = np.array([num for _ in range(n_row) for num in range(n_row)])
            local labels = {}
            for _ = 1, n_row do for num = 1, n_row do labels[#labels + 1] = num end end
            labels = Variable(LongTensor(labels))
            return generator(z, labels)
        end

        local g_losses, d_losses = {}, {}
        for epoch = 0, opt.n_epochs - 1 do
            -- for i, (imgs, labels) in enumerate(dataloader):
            for i, imgs, labels in dataloader:enumerate(0) do
                local batch_size = imgs.shape[1]
                -- valid = Variable(FloatTensor(batch_size, 1).fill_(1.0), requires_grad=False)
                local valid = Variable(FloatTensor(batch_size, 1):fill_(1.0), { requires_grad = false })
                local fake = Variable(FloatTensor(batch_size, 1):fill_(0.0), { requires_grad = false })
                -- real_imgs = Variable(imgs.type(FloatTensor))
                local real_imgs = Variable(imgs:type(FloatTensor))
                labels = Variable(labels:type(LongTensor))

                optimizer_G:zero_grad()
                -- z = Variable(FloatTensor(np.random.normal(0, 1, (batch_size, opt.latent_dim))))
                local z = Variable(FloatTensor(tide.normal(0, 1, { batch_size, opt.latent_dim })))
                -- gen_labels = Variable(LongTensor(np.random.randint(0, opt.n_classes, batch_size)))
                local gen_labels = Variable(LongTensor(tide.randint(1, opt.n_classes + 1, { batch_size })))
                local gen_imgs = generator(z, gen_labels)
                assert.are.same({ batch_size, 1, 16, 16 }, gen_imgs:size())
                local validity = discriminator(gen_imgs, gen_labels)
                local g_loss = adversarial_loss(validity, valid)
                local g0, d0 = snap(generator), snap(discriminator)
                g_loss:backward()
                optimizer_G:step()
                assert.is_true(changed(generator, g0))
                assert.is_false(changed(discriminator, d0))

                optimizer_D:zero_grad()
                local validity_real = discriminator(real_imgs, labels)
                local d_real_loss = adversarial_loss(validity_real, valid)
                -- validity_fake = discriminator(gen_imgs.detach(), gen_labels)
                local validity_fake = discriminator(gen_imgs:detach(), gen_labels)
                local d_fake_loss = adversarial_loss(validity_fake, fake)
                local d_loss = (d_real_loss + d_fake_loss) / 2
                g0, d0 = snap(generator), snap(discriminator)
                d_loss:backward()
                optimizer_D:step()
                assert.is_false(changed(generator, g0))
                assert.is_true(changed(discriminator, d0))
                assert_finite(d_loss:item(), "d_loss")
                assert_finite(g_loss:item(), "g_loss")
                g_losses[#g_losses + 1], d_losses[#d_losses + 1] = g_loss:item(), d_loss:item()
                -- batches_done = epoch * len(dataloader) + i
                local batches_done = epoch * #dataloader + i
                if batches_done % opt.sample_interval == 0 then
                    generator:eval()
                    assert.are.same({ 9, 1, 16, 16 }, sample_image(3):size())
                    generator:train()
                end
            end
        end
        assert.are.equal(2, #g_losses)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. acgan/acgan.py
---------------------------------------------------------------------------------------------
describe("PyTorch-GAN acgan.py", function()
    it("conv Generator with torch.mul(label_emb, noise), two-headed Discriminator, accuracy", function()
        tide.manual_seed(1)
        local opt = { n_epochs = 1, batch_size = 4, lr = 0.0002, b1 = 0.5, b2 = 0.999,
            latent_dim = 8, n_classes = 10, img_size = 16, channels = 1 }

        local Generator = nn.Module:extend("Generator")
        function Generator:init()
            self.label_emb = nn.Embedding(opt.n_classes, opt.latent_dim)
            -- self.init_size = opt.img_size // 4
            self.init_size = math.floor(opt.img_size / 4)
            -- self.l1 = nn.Sequential(nn.Linear(opt.latent_dim, 128 * self.init_size ** 2))
            self.l1 = nn.Sequential(nn.Linear(opt.latent_dim, 128 * self.init_size ^ 2))
            self.conv_blocks = nn.Sequential(
                nn.BatchNorm2d(128),
                -- nn.Upsample(scale_factor=2),
                nn.Upsample({ scale_factor = 2 }),
                -- nn.Conv2d(128, 128, 3, stride=1, padding=1),
                nn.Conv2d(128, 128, 3, { stride = 1, padding = 1 }),
                nn.BatchNorm2d(128, 0.8),
                nn.LeakyReLU(0.2, { inplace = true }),
                nn.Upsample({ scale_factor = 2 }),
                nn.Conv2d(128, 64, 3, { stride = 1, padding = 1 }),
                nn.BatchNorm2d(64, 0.8),
                nn.LeakyReLU(0.2, { inplace = true }),
                nn.Conv2d(64, opt.channels, 3, { stride = 1, padding = 1 }),
                nn.Tanh()
            )
        end
        function Generator:forward(noise, labels)
            -- gen_input = torch.mul(self.label_emb(labels), noise)
            local gen_input = tide.mul(self.label_emb(labels), noise)
            local out = self.l1(gen_input)
            -- out = out.view(out.shape[0], 128, self.init_size, self.init_size)
            out = out:view(out.shape[1], 128, self.init_size, self.init_size)
            return self.conv_blocks(out)
        end

        local Discriminator = nn.Module:extend("Discriminator")
        function Discriminator:init()
            local function discriminator_block(in_filters, out_filters, bn)
                if bn == nil then bn = true end
                -- block = [nn.Conv2d(in_filters, out_filters, 3, 2, 1), nn.LeakyReLU(0.2, inplace=True),
                --          nn.Dropout2d(0.25)]
                local block = { nn.Conv2d(in_filters, out_filters, 3, 2, 1), nn.LeakyReLU(0.2, { inplace = true }),
                    nn.Dropout2d(0.25) }
                if bn then
                    block[#block + 1] = nn.BatchNorm2d(out_filters, 0.8)
                end
                return block
            end
            -- self.conv_blocks = nn.Sequential(*discriminator_block(opt.channels, 16, bn=False), ...)
            self.conv_blocks = nn.Sequential()
            for _, b in ipairs({ discriminator_block(opt.channels, 16, false), discriminator_block(16, 32),
                discriminator_block(32, 64), discriminator_block(64, 128) }) do
                for _, l in ipairs(b) do self.conv_blocks:append(l) end
            end
            -- ds_size = opt.img_size // 2 ** 4
            local ds_size = math.floor(opt.img_size / 2 ^ 4)
            self.adv_layer = nn.Sequential(nn.Linear(128 * ds_size ^ 2, 1), nn.Sigmoid())
            -- nn.Softmax() without a dim: PyTorch 1.13's implicit choice (dim 2 of a 2-D input), warned
            self.aux_layer = nn.Sequential(nn.Linear(128 * ds_size ^ 2, opt.n_classes), nn.Softmax())
        end
        function Discriminator:forward(img)
            local out = self.conv_blocks(img)
            out = out:view(out.shape[1], -1)
            local validity = self.adv_layer(out)
            local label = self.aux_layer(out)
            return validity, label
        end

        -- adversarial_loss = torch.nn.BCELoss(); auxiliary_loss = torch.nn.CrossEntropyLoss()
        local adversarial_loss = tide.nn.BCELoss()
        local auxiliary_loss = tide.nn.CrossEntropyLoss()
        local generator = Generator()
        local discriminator = Discriminator()
        -- generator.apply(weights_init_normal)
        generator:apply(weights_init_normal)
        discriminator:apply(weights_init_normal)
        local conv1 = generator.conv_blocks[3]
        assert.is_true(conv1.weight:std():item() < 0.03)

        local ds = tide.data.TensorDataset(tide.rand(8, 1, 16, 16) * 2 - 1,
            tide.randint(1, opt.n_classes + 1, { 8 }))
        local dataloader = tide.data.DataLoader(ds, { batch_size = opt.batch_size, shuffle = true })
        local optimizer_G = tide.optim.Adam(generator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })
        local optimizer_D = tide.optim.Adam(discriminator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })

        local n = 0
        for _ = 0, opt.n_epochs - 1 do
            for _, imgs, labels in dataloader:enumerate(0) do
                local batch_size = imgs.shape[1]
                local valid = Variable(FloatTensor(batch_size, 1):fill_(1.0), { requires_grad = false })
                local fake = Variable(FloatTensor(batch_size, 1):fill_(0.0), { requires_grad = false })
                local real_imgs = Variable(imgs:type(FloatTensor))
                labels = Variable(labels:type(LongTensor))

                optimizer_G:zero_grad()
                local z = Variable(FloatTensor(tide.normal(0, 1, { batch_size, opt.latent_dim })))
                local gen_labels = Variable(LongTensor(tide.randint(1, opt.n_classes + 1, { batch_size })))
                local gen_imgs = generator(z, gen_labels)
                assert.are.same({ batch_size, 1, 16, 16 }, gen_imgs:size())
                -- validity, pred_label = discriminator(gen_imgs)
                local validity, pred_label = discriminator(gen_imgs)
                assert.are.same({ batch_size, 10 }, pred_label:size())
                -- g_loss = 0.5 * (adversarial_loss(validity, valid) + auxiliary_loss(pred_label, gen_labels))
                local g_loss = 0.5 * (adversarial_loss(validity, valid) + auxiliary_loss(pred_label, gen_labels))
                local g0, d0 = snap(generator), snap(discriminator)
                g_loss:backward()
                optimizer_G:step()
                assert.is_true(changed(generator, g0))
                assert.is_false(changed(discriminator, d0))

                optimizer_D:zero_grad()
                local real_pred, real_aux = discriminator(real_imgs)
                local d_real_loss = (adversarial_loss(real_pred, valid) + auxiliary_loss(real_aux, labels)) / 2
                local fake_pred, fake_aux = discriminator(gen_imgs:detach())
                local d_fake_loss = (adversarial_loss(fake_pred, fake) + auxiliary_loss(fake_aux, gen_labels)) / 2
                local d_loss = (d_real_loss + d_fake_loss) / 2

                -- pred = np.concatenate([real_aux.data.cpu().numpy(), fake_aux.data.cpu().numpy()], axis=0)
                local pred = tide.concatenate({ real_aux.data:cpu(), fake_aux.data:cpu() }, { axis = 1 })
                -- gt = np.concatenate([labels.data.cpu().numpy(), gen_labels.data.cpu().numpy()], axis=0)
                local gt = tide.concatenate({ labels.data:cpu(), gen_labels.data:cpu() }, { axis = 1 })
                -- d_acc = np.mean(np.argmax(pred, axis=1) == gt)
                local d_acc = tide.argmax(pred, { axis = 2 }):eq(gt):float():mean():item()
                assert.is_true(d_acc >= 0 and d_acc <= 1)
                -- the same count by hand
                local hits = 0
                for r = 1, 2 * batch_size do
                    local best = 1
                    for c = 2, 10 do
                        if pred[r][c]:item() > pred[r][best]:item() then best = c end
                    end
                    if best == gt[r]:item() then hits = hits + 1 end
                end
                assert.is_true(math.abs(d_acc - hits / (2 * batch_size)) < 1e-6)

                g0, d0 = snap(generator), snap(discriminator)
                d_loss:backward()
                optimizer_D:step()
                assert.is_false(changed(generator, g0))
                assert.is_true(changed(discriminator, d0))
                assert_finite(d_loss:item(), "d_loss")
                assert_finite(g_loss:item(), "g_loss")
                n = n + 1
            end
        end
        assert.are.equal(2, n)
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. wgan_gp/wgan_gp.py
---------------------------------------------------------------------------------------------
describe("PyTorch-GAN wgan_gp.py", function()
    it("compute_gradient_penalty with autograd.grad by name, n_critic", function()
        tide.manual_seed(2)
        local opt = { n_epochs = 1, batch_size = 4, lr = 0.0002, b1 = 0.5, b2 = 0.999,
            latent_dim = 8, img_size = 16, channels = 1, n_critic = 2, sample_interval = 400 }
        local img_shape = { opt.channels, opt.img_size, opt.img_size }
        local prod = opt.channels * opt.img_size * opt.img_size

        local Generator = nn.Module:extend("Generator")
        function Generator:init()
            local function block(in_feat, out_feat, normalize)
                if normalize == nil then normalize = true end
                local layers = { nn.Linear(in_feat, out_feat) }
                if normalize then layers[#layers + 1] = nn.BatchNorm1d(out_feat, 0.8) end
                layers[#layers + 1] = nn.LeakyReLU(0.2, { inplace = true })
                return layers
            end
            local layers = {}
            for _, b in ipairs({ block(opt.latent_dim, 128, false), block(128, 256), block(256, 512),
                block(512, 1024) }) do
                for _, l in ipairs(b) do layers[#layers + 1] = l end
            end
            layers[#layers + 1] = nn.Linear(1024, prod)
            layers[#layers + 1] = nn.Tanh()
            self.model = nn.Sequential(unpack(layers))
        end
        function Generator:forward(z)
            local img = self.model(z)
            -- img = img.view(img.shape[0], *img_shape)
            return img:view(img.shape[1], unpack(img_shape))
        end

        local Discriminator = nn.Module:extend("Discriminator")
        function Discriminator:init()
            self.model = nn.Sequential(
                nn.Linear(prod, 512),
                nn.LeakyReLU(0.2, { inplace = true }),
                nn.Linear(512, 256),
                nn.LeakyReLU(0.2, { inplace = true }),
                nn.Linear(256, 1)
            )
        end
        function Discriminator:forward(img)
            local img_flat = img:view(img.shape[1], -1)
            return self.model(img_flat)
        end

        local lambda_gp = 10
        local generator = Generator()
        local discriminator = Discriminator()
        local ds = tide.data.TensorDataset(tide.rand(16, 1, 16, 16) * 2 - 1, tide.zeros(16))
        local dataloader = tide.data.DataLoader(ds, { batch_size = opt.batch_size, shuffle = true })
        local optimizer_G = tide.optim.Adam(generator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })
        local optimizer_D = tide.optim.Adam(discriminator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })
        -- Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
        local Tensor = FloatTensor

        local function compute_gradient_penalty(D, real_samples, fake_samples)
            -- alpha = Tensor(np.random.random((real_samples.size(0), 1, 1, 1)))
            local alpha = Tensor(tide.rand(real_samples:size(1), 1, 1, 1))
            -- interpolates = (alpha * real_samples + ((1 - alpha) * fake_samples)).requires_grad_(True)
            local interpolates = (alpha * real_samples + ((1 - alpha) * fake_samples)):requires_grad_(true)
            local d_interpolates = D(interpolates)
            -- fake = Variable(Tensor(real_samples.shape[0], 1).fill_(1.0), requires_grad=False)
            local fake = Variable(Tensor(real_samples.shape[1], 1):fill_(1.0), { requires_grad = false })
            -- gradients = autograd.grad(outputs=..., inputs=..., grad_outputs=fake, create_graph=True,
            --     retain_graph=True, only_inputs=True)[0]
            local gradients = autograd.grad({
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

        -- the penalty against PyTorch's formula written out: D is linear-then-LeakyReLU, so check
        -- the gradient against a finite difference-free reference: autograd's own per-sample grads
        do
            local real, fk = tide.rand(3, 1, 16, 16), tide.rand(3, 1, 16, 16)
            tide.manual_seed(5)
            local gp = compute_gradient_penalty(discriminator, real, fk)
            tide.manual_seed(5)
            local alpha = tide.rand(3, 1, 1, 1)
            local x = (alpha * real + (1 - alpha) * fk):requires_grad_(true)
            discriminator(x):sum():backward()
            local want = ((x.grad:view(3, -1):norm(2, { dim = 2 }) - 1) ^ 2):mean()
            assert.is_true(math.abs(gp:item() - want:item()) < 1e-4 * math.max(1, want:item()))
            discriminator:zero_grad()
            -- create_graph: the penalty reaches the discriminator's weights
            assert.is_true(gp.requires_grad)
            gp:backward()
            assert.is_true(discriminator.model[1].weight.grad:abs():sum():item() > 0)
            discriminator:zero_grad()
        end

        local batches_done, g_steps = 0, 0
        for epoch = 0, opt.n_epochs - 1 do
            -- for i, (imgs, _) in enumerate(dataloader):
            for i, imgs in dataloader:enumerate(0) do
                local real_imgs = Variable(imgs:type(Tensor))
                optimizer_D:zero_grad()
                -- z = Variable(Tensor(np.random.normal(0, 1, (imgs.shape[0], opt.latent_dim))))
                local z = Variable(Tensor(tide.normal(0, 1, { imgs.shape[1], opt.latent_dim })))
                local fake_imgs = generator(z)
                local real_validity = discriminator(real_imgs)
                local fake_validity = discriminator(fake_imgs)
                -- gradient_penalty = compute_gradient_penalty(discriminator, real_imgs.data, fake_imgs.data)
                local gradient_penalty = compute_gradient_penalty(discriminator, real_imgs.data, fake_imgs.data)
                -- d_loss = -torch.mean(real_validity) + torch.mean(fake_validity) + lambda_gp * gradient_penalty
                local d_loss = -tide.mean(real_validity) + tide.mean(fake_validity) + lambda_gp * gradient_penalty
                local g0, d0 = snap(generator), snap(discriminator)
                d_loss:backward()
                optimizer_D:step()
                -- d_loss reached the generator through fake_validity, but optimizer_D moves only D
                assert.is_false(changed(generator, g0))
                assert.is_true(changed(discriminator, d0))
                assert_finite(d_loss:item(), "d_loss")

                optimizer_G:zero_grad()
                -- if i % opt.n_critic == 0:
                if i % opt.n_critic == 0 then
                    fake_imgs = generator(z)
                    fake_validity = discriminator(fake_imgs)
                    -- g_loss = -torch.mean(fake_validity)
                    local g_loss = -tide.mean(fake_validity)
                    g0, d0 = snap(generator), snap(discriminator)
                    g_loss:backward()
                    optimizer_G:step()
                    assert.is_true(changed(generator, g0))
                    assert.is_false(changed(discriminator, d0))
                    assert_finite(g_loss:item(), "g_loss")
                    -- save_image(fake_imgs.data[:25], ...)
                    assert.are.same({ 4, 1, 16, 16 }, fake_imgs.data[{ { 1, 25 } }]:size())
                    g_steps = g_steps + 1
                    batches_done = batches_done + opt.n_critic
                end
            end
        end
        -- 4 batches, n_critic 2: the generator trained on batches 0 and 2
        assert.are.equal(2, g_steps)
        assert.are.equal(4, batches_done)
    end)
    it("the gradient penalty and its weight gradients (create_graph) match PyTorch's", function()
        -- PyTorch 1.13, the same D, samples and alpha: gp 0.294337, D[0].weight.grad and D[2]'s
        local D = nn.Sequential(nn.Linear(4, 3), nn.LeakyReLU(0.2, { inplace = true }), nn.Linear(3, 1))
        tide.no_grad(function()
            D[1].weight:copy_(tide.arange(12):view(3, 4) / 10 - 0.5)
            D[1].bias:copy_(tide.tensor({ 0.1, -0.2, 0.05 }))
            D[3].weight:copy_(tide.tensor({ { 0.7, -1.1, 0.4 } }))
            D[3].bias:fill_(0.3)
        end)
        local real = tide.arange(8):view(2, 1, 2, 2) / 8
        local fake_samples = -tide.arange(8):view(2, 1, 2, 2) / 5
        local alpha = tide.tensor({ 0.25, 0.6 }):view(2, 1, 1, 1)
        local interpolates = (alpha * real + ((1 - alpha) * fake_samples)):requires_grad_(true)
        local d = D(interpolates:view(2, -1))
        local fake = Variable(FloatTensor(2, 1):fill_(1.0), { requires_grad = false })
        local gradients = autograd.grad({ outputs = d, inputs = interpolates, grad_outputs = fake,
            create_graph = true, retain_graph = true, only_inputs = true })[1]
        gradients = gradients:view(gradients:size(1), -1)
        local gp = ((gradients:norm(2, { dim = 2 }) - 1) ^ 2):mean()
        gp:backward()
        assert.is_true(math.abs(gp:item() - 0.294337) < 1e-5)
        local w1 = { 0.504732, 0.411755, 0.318778, 0.225801, -0.15863, -0.129409, -0.100187,
            -0.070966, 0.057684, 0.047058, 0.036432, 0.025806 }
        assert.is_true(tide.allclose(D[1].weight.grad:flatten(), tide.tensor(w1), { atol = 1e-5 }))
        assert.is_true(tide.allclose(D[3].weight.grad:flatten(), tide.tensor({ -0.796945, 0.00759, 0.174569 }),
            { atol = 1e-5 }))
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. infogan/infogan.py
---------------------------------------------------------------------------------------------
describe("PyTorch-GAN infogan.py", function()
    it("to_categorical, three-headed Discriminator, Adam over itertools.chain, info loss", function()
        tide.manual_seed(3)
        local opt = { n_epochs = 1, batch_size = 4, lr = 0.0002, b1 = 0.5, b2 = 0.999,
            latent_dim = 6, code_dim = 2, n_classes = 10, img_size = 16, channels = 1 }

        -- def to_categorical(y, num_columns):
        local function to_categorical(y, num_columns)
            -- y_cat = np.zeros((y.shape[0], num_columns))
            local y_cat = tide.zeros(y.shape[1], num_columns)
            -- y_cat[range(y.shape[0]), y] = 1.0
            y_cat[{ tide.arange(1, y.shape[1] + 1), y }] = 1.0
            return Variable(FloatTensor(y_cat))
        end
        -- np.eye(10)[y] is the same one-hot
        local y = tide.tensor({ 3, 1, 10 })
        assert.is_true(tide.equal(to_categorical(y, 10), tide.eye(10)[{ y }]))

        local Generator = nn.Module:extend("Generator")
        function Generator:init()
            local input_dim = opt.latent_dim + opt.n_classes + opt.code_dim
            self.init_size = math.floor(opt.img_size / 4)
            self.l1 = nn.Sequential(nn.Linear(input_dim, 128 * self.init_size ^ 2))
            self.conv_blocks = nn.Sequential(
                nn.BatchNorm2d(128),
                nn.Upsample({ scale_factor = 2 }),
                nn.Conv2d(128, 128, 3, { stride = 1, padding = 1 }),
                nn.BatchNorm2d(128, 0.8),
                nn.LeakyReLU(0.2, { inplace = true }),
                nn.Upsample({ scale_factor = 2 }),
                nn.Conv2d(128, 64, 3, { stride = 1, padding = 1 }),
                nn.BatchNorm2d(64, 0.8),
                nn.LeakyReLU(0.2, { inplace = true }),
                nn.Conv2d(64, opt.channels, 3, { stride = 1, padding = 1 }),
                nn.Tanh()
            )
        end
        function Generator:forward(noise, labels, code)
            -- gen_input = torch.cat((noise, labels, code), -1)
            local gen_input = tide.cat({ noise, labels, code }, -1)
            local out = self.l1(gen_input)
            out = out:view(out.shape[1], 128, self.init_size, self.init_size)
            return self.conv_blocks(out)
        end

        local Discriminator = nn.Module:extend("Discriminator")
        function Discriminator:init()
            local function discriminator_block(in_filters, out_filters, bn)
                if bn == nil then bn = true end
                local block = { nn.Conv2d(in_filters, out_filters, 3, 2, 1), nn.LeakyReLU(0.2, { inplace = true }),
                    nn.Dropout2d(0.25) }
                if bn then block[#block + 1] = nn.BatchNorm2d(out_filters, 0.8) end
                return block
            end
            local layers = {}
            for _, b in ipairs({ discriminator_block(opt.channels, 16, false), discriminator_block(16, 32),
                discriminator_block(32, 64), discriminator_block(64, 128) }) do
                for _, l in ipairs(b) do layers[#layers + 1] = l end
            end
            self.conv_blocks = nn.Sequential(unpack(layers))
            local ds_size = math.floor(opt.img_size / 2 ^ 4)
            self.adv_layer = nn.Sequential(nn.Linear(128 * ds_size ^ 2, 1))
            self.aux_layer = nn.Sequential(nn.Linear(128 * ds_size ^ 2, opt.n_classes), nn.Softmax())
            self.latent_layer = nn.Sequential(nn.Linear(128 * ds_size ^ 2, opt.code_dim))
        end
        function Discriminator:forward(img)
            local out = self.conv_blocks(img)
            out = out:view(out.shape[1], -1)
            local validity = self.adv_layer(out)
            local label = self.aux_layer(out)
            local latent_code = self.latent_layer(out)
            return validity, label, latent_code
        end

        local adversarial_loss = tide.nn.MSELoss()
        local categorical_loss = tide.nn.CrossEntropyLoss()
        local continuous_loss = tide.nn.MSELoss()
        local lambda_cat = 1
        local lambda_con = 0.1
        local generator = Generator()
        local discriminator = Discriminator()
        generator:apply(weights_init_normal)
        discriminator:apply(weights_init_normal)
        -- "BatchNorm" matched BatchNorm2d: its weight is near 1, its bias 0
        assert.is_true(math.abs(generator.conv_blocks[1].weight:mean():item() - 1) < 0.05)

        local ds = tide.data.TensorDataset(tide.rand(8, 1, 16, 16) * 2 - 1,
            tide.randint(1, opt.n_classes + 1, { 8 }))
        local dataloader = tide.data.DataLoader(ds, { batch_size = opt.batch_size, shuffle = true })
        local optimizer_G = tide.optim.Adam(generator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })
        local optimizer_D = tide.optim.Adam(discriminator:parameters(), { lr = opt.lr, betas = { opt.b1, opt.b2 } })
        -- optimizer_info = torch.optim.Adam(
        --     itertools.chain(generator.parameters(), discriminator.parameters()), lr=opt.lr, betas=(opt.b1, opt.b2))
        local optimizer_info = tide.optim.Adam(
            tide.utils.chain(generator:parameters(), discriminator:parameters()),
            { lr = opt.lr, betas = { opt.b1, opt.b2 } }
        )
        assert.are.equal(#generator:parameters() + #discriminator:parameters(),
            #optimizer_info.param_groups[1].params)

        -- static_z = Variable(FloatTensor(np.zeros((opt.n_classes ** 2, opt.latent_dim))))
        local static_z = Variable(FloatTensor(tide.zeros(opt.n_classes ^ 2, opt.latent_dim)))
        -- static_label = to_categorical(
        --     np.array([num for _ in range(opt.n_classes) for num in range(opt.n_classes)]), num_columns=opt.n_classes)
        local nums = {}
        for _ = 1, opt.n_classes do for num = 1, opt.n_classes do nums[#nums + 1] = num end end
        local static_label = to_categorical(tide.tensor(nums), opt.n_classes)
        local static_code = Variable(FloatTensor(tide.zeros(opt.n_classes ^ 2, opt.code_dim)))
        -- sample_image's varied codes: c_varied = np.repeat(np.linspace(-1, 1, n_row)[:, np.newaxis], n_row, 0)
        local n_row = opt.n_classes
        local zeros = tide.zeros(n_row ^ 2, 1)
        local c_varied = tide.linspace(-1, 1, n_row)[{ {}, tide.newaxis }]:repeat_interleave(n_row, 1)
        -- c1 = Variable(FloatTensor(np.concatenate((c_varied, zeros), -1)))
        local c1 = Variable(FloatTensor(tide.concatenate({ c_varied, zeros }, -1)))
        assert.are.same({ 100, 2 }, c1:size())
        assert.are.equal(-1, c1[1][1]:item())
        assert.are.equal(1, c1[100][1]:item())
        generator:eval()
        assert.are.same({ 100, 1, 16, 16 }, generator(static_z, static_label, c1):size())
        generator:train()

        local n = 0
        for _ = 0, opt.n_epochs - 1 do
            for _, imgs, labels in dataloader:enumerate(0) do
                local batch_size = imgs.shape[1]
                local valid = Variable(FloatTensor(batch_size, 1):fill_(1.0), { requires_grad = false })
                local fake = Variable(FloatTensor(batch_size, 1):fill_(0.0), { requires_grad = false })
                local real_imgs = Variable(imgs:type(FloatTensor))
                -- labels = to_categorical(labels.numpy(), num_columns=opt.n_classes)
                labels = to_categorical(labels, opt.n_classes)

                optimizer_G:zero_grad()
                local z = Variable(FloatTensor(tide.normal(0, 1, { batch_size, opt.latent_dim })))
                -- label_input = to_categorical(np.random.randint(0, opt.n_classes, batch_size),
                --                             num_columns=opt.n_classes)
                local label_input = to_categorical(tide.randint(1, opt.n_classes + 1, { batch_size }), opt.n_classes)
                -- code_input = Variable(FloatTensor(np.random.uniform(-1, 1, (batch_size, opt.code_dim))))
                local code_input = Variable(FloatTensor(tide.empty(batch_size, opt.code_dim):uniform_(-1, 1)))
                local gen_imgs = generator(z, label_input, code_input)
                -- validity, _, _ = discriminator(gen_imgs)
                local validity = discriminator(gen_imgs)
                local g_loss = adversarial_loss(validity, valid)
                local g0, d0 = snap(generator), snap(discriminator)
                g_loss:backward()
                optimizer_G:step()
                assert.is_true(changed(generator, g0))
                assert.is_false(changed(discriminator, d0))

                optimizer_D:zero_grad()
                local real_pred = discriminator(real_imgs)
                local d_real_loss = adversarial_loss(real_pred, valid)
                local fake_pred = discriminator(gen_imgs:detach())
                local d_fake_loss = adversarial_loss(fake_pred, fake)
                local d_loss = (d_real_loss + d_fake_loss) / 2
                g0, d0 = snap(generator), snap(discriminator)
                d_loss:backward()
                optimizer_D:step()
                assert.is_false(changed(generator, g0))
                assert.is_true(changed(discriminator, d0))

                optimizer_info:zero_grad()
                -- sampled_labels = np.random.randint(0, opt.n_classes, batch_size)
                local sampled_labels = tide.randint(1, opt.n_classes + 1, { batch_size })
                -- gt_labels = Variable(LongTensor(sampled_labels), requires_grad=False)
                local gt_labels = Variable(LongTensor(sampled_labels), { requires_grad = false })
                z = Variable(FloatTensor(tide.normal(0, 1, { batch_size, opt.latent_dim })))
                label_input = to_categorical(sampled_labels, opt.n_classes)
                code_input = Variable(FloatTensor(tide.empty(batch_size, opt.code_dim):uniform_(-1, 1)))
                gen_imgs = generator(z, label_input, code_input)
                -- _, pred_label, pred_code = discriminator(gen_imgs)
                local _, pred_label, pred_code = discriminator(gen_imgs)
                local info_loss = lambda_cat * categorical_loss(pred_label, gt_labels) + lambda_con * continuous_loss(
                    pred_code, code_input
                )
                g0, d0 = snap(generator), snap(discriminator)
                info_loss:backward()
                optimizer_info:step()
                -- the chained Adam moves both networks
                assert.is_true(changed(generator, g0))
                assert.is_true(changed(discriminator, d0))
                assert_finite(d_loss:item(), "d_loss")
                assert_finite(g_loss:item(), "g_loss")
                assert_finite(info_loss:item(), "info_loss")
                n = n + 1
            end
        end
        assert.are.equal(2, n)
    end)

    it("a list of parameter lists raises naming tide.utils.chain; chain checks its arguments", function()
        local a, b = nn.Linear(2, 2), nn.Linear(2, 3)
        -- Adam([a.parameters(), b.parameters()]) is no parameter list in PyTorch either
        assert.has_error(function()
            tide.optim.Adam({ a:parameters(), b:parameters() }, { lr = 1 })
        end, nil)
        local ok, err = pcall(tide.optim.Adam, { a:parameters(), b:parameters() }, { lr = 1 })
        assert.is_false(ok)
        assert.truthy(tostring(err):find("tide.utils.chain(a, b)", 1, true))
        assert.truthy(tostring(err):find("parameter group 1 is a list of 2 tensors", 1, true))
        local l = tide.utils.chain(a:parameters(), b:parameters(), {})
        assert.are.equal(4, #l)
        assert.are.equal(a.weight, l[1])
        assert.are.equal(b.bias, l[4])
        ok, err = pcall(tide.utils.chain, a:parameters(), b)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("tide: utils.chain: argument 2 is a module", 1, true))
        ok, err = pcall(tide.utils.chain, a.weight)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("argument 1 is a userdata", 1, true))
    end)
end)
