-- ported_scripts42_spec.lua — aladdinpersson/Machine-Learning-Collection's GANs ported line for
-- line: ProGAN (model.py's WSConv2d/PixelNorm/ConvBlock/Generator/Discriminator with fade_in and
-- minibatch_std, utils.py's gradient_penalty, one step of train.py's train_fn at steps 0 and 1),
-- ESRGAN (model.py, loss.py's VGGLoss with a tiny conv stack for the VGG), SRGAN (model.py) and
-- CycleGAN's generator and discriminator. Each runs on tiny random images: shapes,
-- finite losses, and each optimizer changes only its network. The Python line stands above each
-- Lua line that differs from it; dims and indices are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

-- snapshot of a module's parameters, to check which network an optimizer step moved
local function snapshot(m)
    local s = {}
    for i, p in ipairs(m:parameters()) do s[i] = p:clone() end
    return s
end
local function changed(m, s)
    for i, p in ipairs(m:parameters()) do
        if not tide.equal(p, s[i]) then return true end
    end
    return false
end

---------------------------------------------------------------------------------------------
-- 1. GANs/ProGAN/model.py, utils.py, train.py
---------------------------------------------------------------------------------------------
describe("ProGAN model.py / utils.py / train.py", function()
    -- factors = [1, 1, 1, 1, 1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32]
    local factors = { 1, 1, 1, 1, 1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32 }

    local WSConv2d = nn.Module:extend("WSConv2d")
    -- def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=1, gain=2):
    nn.signature(WSConv2d, "in_channels, out_channels, kernel_size=3, stride=1, padding=1, gain=2")
    function WSConv2d:init(in_channels, out_channels, kernel_size, stride, padding, gain)
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding)
        self.scale = (gain / (in_channels * (kernel_size ^ 2))) ^ 0.5
        self.bias = self.conv.bias
        self.conv.bias = nil
        -- initialize conv layer
        nn.init.normal_(self.conv.weight)
        nn.init.zeros_(self.bias)
    end
    function WSConv2d:forward(x)
        -- return self.conv(x * self.scale) + self.bias.view(1, self.bias.shape[0], 1, 1)
        return self.conv(x * self.scale) + self.bias:view(1, self.bias.shape[1], 1, 1)
    end

    local PixelNorm = nn.Module:extend("PixelNorm")
    function PixelNorm:init()
        self.epsilon = 1e-8
    end
    function PixelNorm:forward(x)
        -- return x / torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.epsilon)
        return x / tide.sqrt(tide.mean(x ^ 2, { dim = 2, keepdim = true }) + self.epsilon)
    end

    local ConvBlock = nn.Module:extend("ConvBlock")
    nn.signature(ConvBlock, "in_channels, out_channels, use_pixelnorm=True")
    function ConvBlock:init(in_channels, out_channels, use_pixelnorm)
        self.use_pn = use_pixelnorm
        self.conv1 = WSConv2d(in_channels, out_channels)
        self.conv2 = WSConv2d(out_channels, out_channels)
        self.leaky = nn.LeakyReLU(0.2)
        self.pn = PixelNorm()
    end
    function ConvBlock:forward(x)
        x = self.leaky(self.conv1(x))
        -- x = self.pn(x) if self.use_pn else x
        if self.use_pn then x = self.pn(x) end
        x = self.leaky(self.conv2(x))
        if self.use_pn then x = self.pn(x) end
        return x
    end

    local Generator = nn.Module:extend("Generator")
    nn.signature(Generator, "z_dim, in_channels, img_channels=3")
    function Generator:init(z_dim, in_channels, img_channels)
        -- initial takes 1x1 -> 4x4
        self.initial = nn.Sequential(
            PixelNorm(),
            nn.ConvTranspose2d(z_dim, in_channels, 4, 1, 0),
            nn.LeakyReLU(0.2),
            WSConv2d(in_channels, in_channels, { kernel_size = 3, stride = 1, padding = 1 }),
            nn.LeakyReLU(0.2),
            PixelNorm()
        )
        self.initial_rgb = WSConv2d(in_channels, img_channels, { kernel_size = 1, stride = 1, padding = 0 })
        -- self.prog_blocks, self.rgb_layers = (nn.ModuleList([]), nn.ModuleList([self.initial_rgb]))
        self.prog_blocks, self.rgb_layers = nn.ModuleList({}), nn.ModuleList({ self.initial_rgb })
        -- for i in range(len(factors) - 1):
        for i = 1, #factors - 1 do
            -- conv_in_c = int(in_channels * factors[i])
            local conv_in_c = math.floor(in_channels * factors[i])
            local conv_out_c = math.floor(in_channels * factors[i + 1])
            self.prog_blocks:append(ConvBlock(conv_in_c, conv_out_c))
            self.rgb_layers:append(WSConv2d(conv_out_c, img_channels, { kernel_size = 1, stride = 1, padding = 0 }))
        end
    end
    function Generator:fade_in(alpha, upscaled, generated)
        -- return torch.tanh(alpha * generated + (1 - alpha) * upscaled)
        return tide.tanh(alpha * generated + (1 - alpha) * upscaled)
    end
    function Generator:forward(x, alpha, steps)
        local out = self.initial(x)
        if steps == 0 then
            return self.initial_rgb(out)
        end
        local upscaled
        -- for step in range(steps):
        for step = 0, steps - 1 do
            -- upscaled = F.interpolate(out, scale_factor=2, mode="nearest")
            upscaled = F.interpolate(out, { scale_factor = 2, mode = "nearest" })
            -- out = self.prog_blocks[step](upscaled)  (a ModuleList is 1-based)
            out = self.prog_blocks[step + 1](upscaled)
        end
        -- final_upscaled = self.rgb_layers[steps - 1](upscaled); final_out = self.rgb_layers[steps](out)
        local final_upscaled = self.rgb_layers[steps](upscaled)
        local final_out = self.rgb_layers[steps + 1](out)
        return self:fade_in(alpha, final_upscaled, final_out)
    end
    nn.signature(Generator, "x, alpha, steps", "forward")

    local Discriminator = nn.Module:extend("Discriminator")
    nn.signature(Discriminator, "in_channels, img_channels=3")
    function Discriminator:init(in_channels, img_channels)
        self.prog_blocks, self.rgb_layers = nn.ModuleList({}), nn.ModuleList({})
        self.leaky = nn.LeakyReLU(0.2)
        -- for i in range(len(factors) - 1, 0, -1):
        for i = #factors, 2, -1 do
            local conv_in = math.floor(in_channels * factors[i])
            local conv_out = math.floor(in_channels * factors[i - 1])
            self.prog_blocks:append(ConvBlock(conv_in, conv_out, { use_pixelnorm = false }))
            self.rgb_layers:append(WSConv2d(img_channels, conv_in, { kernel_size = 1, stride = 1, padding = 0 }))
        end
        self.initial_rgb = WSConv2d(img_channels, in_channels, { kernel_size = 1, stride = 1, padding = 0 })
        self.rgb_layers:append(self.initial_rgb)
        -- self.avg_pool = nn.AvgPool2d(kernel_size=2, stride=2)
        self.avg_pool = nn.AvgPool2d({ kernel_size = 2, stride = 2 })
        -- this is the block for 4x4 input size
        self.final_block = nn.Sequential(
            WSConv2d(in_channels + 1, in_channels, { kernel_size = 3, padding = 1 }),
            nn.LeakyReLU(0.2),
            WSConv2d(in_channels, in_channels, { kernel_size = 4, padding = 0, stride = 1 }),
            nn.LeakyReLU(0.2),
            WSConv2d(in_channels, 1, { kernel_size = 1, padding = 0, stride = 1 })
        )
    end
    function Discriminator:fade_in(alpha, downscaled, out)
        return alpha * out + (1 - alpha) * downscaled
    end
    function Discriminator:minibatch_std(x)
        -- torch.std(x, dim=0).mean().repeat(x.shape[0], 1, x.shape[2], x.shape[3])
        -- (Lua's `repeat` is a keyword: x["repeat"](x, ...) is Python's x.repeat(...))
        local m = tide.std(x, { dim = 1 }):mean()
        local batch_statistics = m["repeat"](m, x.shape[1], 1, x.shape[3], x.shape[4])
        -- return torch.cat([x, batch_statistics], dim=1)
        return tide.cat({ x, batch_statistics }, { dim = 2 })
    end
    function Discriminator:forward(x, alpha, steps)
        -- cur_step = len(self.prog_blocks) - steps
        -- (cur_step counts as in Python; a ModuleList's index is cur_step + 1)
        local cur_step = #self.prog_blocks - steps
        -- out = self.leaky(self.rgb_layers[cur_step](x))
        local out = self.leaky(self.rgb_layers[cur_step + 1](x))
        if steps == 0 then -- i.e, image is 4x4
            out = self:minibatch_std(out)
            -- return self.final_block(out).view(out.shape[0], -1)
            return self.final_block(out):view(out.shape[1], -1)
        end
        -- downscaled = self.leaky(self.rgb_layers[cur_step + 1](self.avg_pool(x)))
        local downscaled = self.leaky(self.rgb_layers[cur_step + 2](self.avg_pool(x)))
        -- out = self.avg_pool(self.prog_blocks[cur_step](out))
        out = self.avg_pool(self.prog_blocks[cur_step + 1](out))
        out = self:fade_in(alpha, downscaled, out)
        -- for step in range(cur_step + 1, len(self.prog_blocks)):
        for step = cur_step + 1, #self.prog_blocks - 1 do
            -- out = self.prog_blocks[step](out)
            out = self.prog_blocks[step + 1](out)
            out = self.avg_pool(out)
        end
        out = self:minibatch_std(out)
        return self.final_block(out):view(out.shape[1], -1)
    end
    nn.signature(Discriminator, "x, alpha, steps", "forward")

    -- utils.py
    local function gradient_penalty(critic, real, fake, alpha, train_step, device)
        device = device or "cpu"
        -- BATCH_SIZE, C, H, W = real.shape
        local BATCH_SIZE, C, H, W = unpack(real.shape)
        -- beta = torch.rand((BATCH_SIZE, 1, 1, 1)).repeat(1, C, H, W).to(device)
        local r = tide.rand({ BATCH_SIZE, 1, 1, 1 })
        local beta = r["repeat"](r, 1, C, H, W):to(device)
        local interpolated_images = real * beta + fake:detach() * (1 - beta)
        interpolated_images:requires_grad_(true)
        -- Calculate critic scores
        local mixed_scores = critic(interpolated_images, alpha, train_step)
        -- gradient = torch.autograd.grad(inputs=..., outputs=..., grad_outputs=torch.ones_like(mixed_scores),
        --     create_graph=True, retain_graph=True)[0]
        local gradient = tide.autograd.grad({
            inputs = interpolated_images,
            outputs = mixed_scores,
            grad_outputs = tide.ones_like(mixed_scores),
            create_graph = true,
            retain_graph = true,
        })[1]
        gradient = gradient:view(gradient.shape[1], -1)
        -- gradient_norm = gradient.norm(2, dim=1)
        local gradient_norm = gradient:norm(2, { dim = 2 })
        return tide.mean((gradient_norm - 1) ^ 2)
    end

    it("model.py's __main__: every step's image size and the critic's (1, 1)", function()
        tide.manual_seed(0)
        local Z_DIM, IN_CHANNELS = 8, 32
        local gen = Generator(Z_DIM, IN_CHANNELS, { img_channels = 3 })
        local critic = Discriminator(IN_CHANNELS, { img_channels = 3 })
        -- for img_size in [4, 8, 16]:
        for _, img_size in ipairs({ 4, 8, 16 }) do
            -- num_steps = int(log2(img_size / 4))
            local num_steps = math.floor(math.log(img_size / 4) / math.log(2) + 0.5) -- (5.1: no base)
            local x = tide.randn({ 1, Z_DIM, 1, 1 })
            -- z = gen(x, 0.5, steps=num_steps)
            local z = gen(x, 0.5, { steps = num_steps })
            assert.are.same({ 1, 3, img_size, img_size }, z.shape)
            -- out = critic(z, alpha=0.5, steps=num_steps)
            local out = critic(z, { alpha = 0.5, steps = num_steps })
            assert.are.same({ 1, 1 }, out.shape)
        end
    end)

    it("WSConv2d's bias is a registered parameter and conv.bias is None", function()
        local m = WSConv2d(4, 6)
        assert.is_nil(m.conv.bias)
        local names = {}
        for name in pairs(m:state_dict()) do names[#names + 1] = name end
        table.sort(names)
        assert.are.same({ "bias", "conv.weight" }, names)
        assert.is_true(math.abs(m.scale - (2 / (4 * 9)) ^ 0.5) < 1e-12)
    end)

    it("train_fn at steps 0 and 1: critic with gradient_penalty, then the generator", function()
        tide.manual_seed(3)
        -- config.py, shrunk
        local config = { DEVICE = "cpu", Z_DIM = 8, IN_CHANNELS = 32, CHANNELS_IMG = 3, LAMBDA_GP = 10,
            CRITIC_ITERATIONS = 1, LEARNING_RATE = 1e-3, PROGRESSIVE_EPOCHS = { 1, 1 } }
        local gen = Generator(config.Z_DIM, config.IN_CHANNELS, { img_channels = config.CHANNELS_IMG }):to(config.DEVICE)
        local critic = Discriminator(config.IN_CHANNELS, { img_channels = config.CHANNELS_IMG }):to(config.DEVICE)
        -- opt_gen = optim.Adam(gen.parameters(), lr=config.LEARNING_RATE, betas=(0.0, 0.99))
        local opt_gen = optim.Adam(gen:parameters(), { lr = config.LEARNING_RATE, betas = { 0.0, 0.99 } })
        local opt_critic = optim.Adam(critic:parameters(), { lr = config.LEARNING_RATE, betas = { 0.0, 0.99 } })
        -- scaler_critic = torch.cuda.amp.GradScaler()
        local scaler_critic = tide.cuda.amp.GradScaler()
        local scaler_gen = tide.cuda.amp.GradScaler()
        gen:train()
        critic:train()

        for step = 0, 1 do
            local alpha = 0.01
            local size = 4 * 2 ^ step
            local dataset = tide.data.TensorDataset(tide.rand(4, 3, size, size) * 2 - 1, tide.zeros(4))
            local loader = tide.data.DataLoader(dataset, { batch_size = 2, shuffle = true })
            local losses_critic = {}
            -- for batch_idx, (real, _) in enumerate(loop):
            for _, real in loader:enumerate(0) do
                real = real:to(config.DEVICE)
                local cur_batch_size = real.shape[1]
                local noise, loss_critic, loss_gen
                for _ = 1, config.CRITIC_ITERATIONS do
                    -- noise = torch.randn(cur_batch_size, config.Z_DIM, 1, 1).to(config.DEVICE)
                    noise = tide.randn(cur_batch_size, config.Z_DIM, 1, 1):to(config.DEVICE)
                    -- with torch.cuda.amp.autocast():
                    tide.cuda.amp.autocast(function()
                        local fake = gen(noise, alpha, step)
                        local critic_real = critic(real, alpha, step):reshape(-1)
                        local critic_fake = critic(fake, alpha, step):reshape(-1)
                        local gp = gradient_penalty(critic, real, fake, alpha, step, config.DEVICE)
                        loss_critic = (-(tide.mean(critic_real) - tide.mean(critic_fake))
                            + config.LAMBDA_GP * gp)
                    end)
                    losses_critic[#losses_critic + 1] = loss_critic:item()
                    local g0, c0 = snapshot(gen), snapshot(critic)
                    opt_critic:zero_grad()
                    scaler_critic:scale(loss_critic):backward()
                    scaler_critic:step(opt_critic)
                    scaler_critic:update()
                    assert.is_true(changed(critic, c0))
                    assert.is_false(changed(gen, g0))
                end
                tide.cuda.amp.autocast(function()
                    local fake = gen(noise, alpha, step)
                    local gen_fake = critic(fake, alpha, step):reshape(-1)
                    loss_gen = -tide.mean(gen_fake)
                end)
                local g0, c0 = snapshot(gen), snapshot(critic)
                opt_gen:zero_grad()
                scaler_gen:scale(loss_gen):backward()
                scaler_gen:step(opt_gen)
                scaler_gen:update()
                assert.is_true(changed(gen, g0))
                assert.is_false(changed(critic, c0))
                assert_finite(loss_gen:item(), "loss_gen")
                -- alpha += cur_batch_size / ((config.PROGRESSIVE_EPOCHS[step]*0.5) * len(dataset))
                alpha = alpha + cur_batch_size / ((config.PROGRESSIVE_EPOCHS[step + 1] * 0.5) * #dataset)
                alpha = math.min(alpha, 1)
            end
            for _, l in ipairs(losses_critic) do assert_finite(l, "loss_critic") end
            assert.is_true(alpha > 0.01)
        end
    end)
end)

-- Python's f(**kwargs, bias=True): kwargs with the named ones added (a new table)
local function merge(kwargs, extra)
    local t = {}
    for k, v in pairs(kwargs) do t[k] = v end
    for k, v in pairs(extra) do t[k] = v end
    return t
end

---------------------------------------------------------------------------------------------
-- 2. GANs/ESRGAN/model.py and loss.py
---------------------------------------------------------------------------------------------
describe("ESRGAN model.py / loss.py", function()
    local ConvBlock = nn.Module:extend("ConvBlock")
    -- def __init__(self, in_channels, out_channels, use_act, **kwargs):
    nn.signature(ConvBlock, "in_channels, out_channels, use_act, **kwargs")
    function ConvBlock:init(in_channels, out_channels, use_act, kwargs)
        -- self.cnn = nn.Conv2d(in_channels, out_channels, **kwargs, bias=True)
        self.cnn = nn.Conv2d(in_channels, out_channels, merge(kwargs, { bias = true }))
        -- self.act = nn.LeakyReLU(0.2, inplace=True) if use_act else nn.Identity()
        self.act = use_act and nn.LeakyReLU(0.2, { inplace = true }) or nn.Identity()
    end
    function ConvBlock:forward(x)
        return self.act(self.cnn(x))
    end

    local UpsampleBlock = nn.Module:extend("UpsampleBlock")
    nn.signature(UpsampleBlock, "in_c, scale_factor=2")
    function UpsampleBlock:init(in_c, scale_factor)
        -- self.upsample = nn.Upsample(scale_factor=scale_factor, mode="nearest")
        self.upsample = nn.Upsample({ scale_factor = scale_factor, mode = "nearest" })
        -- self.conv = nn.Conv2d(in_c, in_c, 3, 1, 1, bias=True)
        self.conv = nn.Conv2d(in_c, in_c, 3, 1, 1, { bias = true })
        self.act = nn.LeakyReLU(0.2, { inplace = true })
    end
    function UpsampleBlock:forward(x)
        return self.act(self.conv(self.upsample(x)))
    end

    local DenseResidualBlock = nn.Module:extend("DenseResidualBlock")
    nn.signature(DenseResidualBlock, "in_channels, channels=32, residual_beta=0.2")
    function DenseResidualBlock:init(in_channels, channels, residual_beta)
        self.residual_beta = residual_beta
        self.blocks = nn.ModuleList()
        -- for i in range(5):
        for i = 0, 4 do
            self.blocks:append(ConvBlock(
                in_channels + channels * i,
                -- channels if i <= 3 else in_channels,
                i <= 3 and channels or in_channels,
                {
                    kernel_size = 3,
                    stride = 1,
                    padding = 1,
                    -- use_act=True if i <= 3 else False,
                    use_act = i <= 3,
                }
            ))
        end
    end
    function DenseResidualBlock:forward(x)
        local new_inputs, out = x, nil
        -- for block in self.blocks:
        for _, block in ipairs(self.blocks) do
            out = block(new_inputs)
            -- new_inputs = torch.cat([new_inputs, out], dim=1)
            new_inputs = tide.cat({ new_inputs, out }, { dim = 2 })
        end
        return self.residual_beta * out + x
    end

    local RRDB = nn.Module:extend("RRDB")
    nn.signature(RRDB, "in_channels, residual_beta=0.2")
    function RRDB:init(in_channels, residual_beta)
        self.residual_beta = residual_beta
        -- self.rrdb = nn.Sequential(*[DenseResidualBlock(in_channels) for _ in range(3)])
        local blocks = {}
        for i = 1, 3 do blocks[i] = DenseResidualBlock(in_channels) end
        self.rrdb = nn.Sequential(unpack(blocks))
    end
    function RRDB:forward(x)
        return self.rrdb(x) * self.residual_beta + x
    end

    local Generator = nn.Module:extend("Generator")
    nn.signature(Generator, "in_channels=3, num_channels=64, num_blocks=23")
    function Generator:init(in_channels, num_channels, num_blocks)
        self.initial = nn.Conv2d(
            in_channels,
            num_channels,
            { kernel_size = 3, stride = 1, padding = 1, bias = true }
        )
        -- self.residuals = nn.Sequential(*[RRDB(num_channels) for _ in range(num_blocks)])
        local rrdbs = {}
        for i = 1, num_blocks do rrdbs[i] = RRDB(num_channels) end
        self.residuals = nn.Sequential(unpack(rrdbs))
        self.conv = nn.Conv2d(num_channels, num_channels, { kernel_size = 3, stride = 1, padding = 1 })
        self.upsamples = nn.Sequential(
            UpsampleBlock(num_channels), UpsampleBlock(num_channels)
        )
        self.final = nn.Sequential(
            nn.Conv2d(num_channels, num_channels, 3, 1, 1, { bias = true }),
            nn.LeakyReLU(0.2, { inplace = true }),
            nn.Conv2d(num_channels, in_channels, 3, 1, 1, { bias = true })
        )
    end
    function Generator:forward(x)
        local initial = self.initial(x)
        x = self.conv(self.residuals(initial)) + initial
        x = self.upsamples(x)
        return self.final(x)
    end

    local Discriminator = nn.Module:extend("Discriminator")
    nn.signature(Discriminator, "in_channels=3, features=[64, 64, 128, 128, 256, 256, 512, 512]")
    function Discriminator:init(in_channels, features)
        local blocks = {}
        -- for idx, feature in enumerate(features):
        for idx0, feature in ipairs(features) do
            local idx = idx0 - 1
            blocks[#blocks + 1] = ConvBlock(
                in_channels,
                feature,
                {
                    kernel_size = 3,
                    -- stride=1 + idx % 2,
                    stride = 1 + idx % 2,
                    padding = 1,
                    use_act = true,
                }
            )
            in_channels = feature
        end
        self.blocks = nn.Sequential(unpack(blocks))
        self.classifier = nn.Sequential(
            -- nn.AdaptiveAvgPool2d((6, 6)),
            nn.AdaptiveAvgPool2d({ 6, 6 }),
            nn.Flatten(),
            -- nn.Linear(512 * 6 * 6, 1024)  (features[-1] here: the features are shrunk)
            nn.Linear(features[#features] * 6 * 6, 1024),
            nn.LeakyReLU(0.2, { inplace = true }),
            nn.Linear(1024, 1)
        )
    end
    function Discriminator:forward(x)
        x = self.blocks(x)
        return self.classifier(x)
    end

    -- def initialize_weights(model, scale=0.1):
    local function initialize_weights(model, scale)
        scale = scale or 0.1
        -- for m in model.modules():
        for _, m in ipairs(model:modules()) do
            if tide.isinstance(m, nn.Conv2d) then
                nn.init.kaiming_normal_(m.weight.data)
                -- m.weight.data *= scale
                m.weight.data:mul_(scale)
            elseif tide.isinstance(m, nn.Linear) then
                nn.init.kaiming_normal_(m.weight.data)
                m.weight.data:mul_(scale)
            end
        end
    end

    -- loss.py's VGGLoss, with vgg19(pretrained=True).features[:35] replaced by a tiny
    -- nn.Sequential of convs (no pretrained weights here)
    local VGGLoss = nn.Module:extend("VGGLoss")
    function VGGLoss:init()
        -- self.vgg = vgg19(pretrained=True).features[:35].eval().to(config.DEVICE)
        self.vgg = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.ReLU(), nn.Conv2d(8, 8, 3, 1, 1))
            :eval():to("cpu")
        -- for param in self.vgg.parameters(): param.requires_grad = False
        for _, param in ipairs(self.vgg:parameters()) do
            param.requires_grad = false
        end
        self.loss = nn.MSELoss()
    end
    function VGGLoss:forward(input, target)
        local vgg_input_features = self.vgg(input)
        local vgg_target_features = self.vgg(target)
        return self.loss(vgg_input_features, vgg_target_features)
    end

    it("ConvBlock(..., **kwargs) passes the other names on to nn.Conv2d", function()
        local b = ConvBlock(3, 5, { kernel_size = 3, stride = 2, padding = 1, use_act = false })
        assert.are.same({ 2, 2 }, b.cnn.stride)
        assert.is_not_nil(b.cnn.bias)
        assert.is_true(tide.isinstance(b.act, nn.Identity))
        -- positionally too: ConvBlock(3, 5, True, kernel_size=1)
        local c = ConvBlock(3, 5, true, { kernel_size = 1 })
        assert.are.same({ 1, 1 }, c.cnn.kernel_size)
        -- a name Conv2d does not take reaches Conv2d, which names it
        assert.has_error(function() ConvBlock(3, 5, true, { kernel_size = 1, strid = 2 }) end)
    end)

    it("test(): a 24x24 input, the generator x4, the discriminator (5, 1); one step each", function()
        tide.manual_seed(4)
        local gen = Generator({ num_channels = 8, num_blocks = 1 })
        local disc = Discriminator({ features = { 4, 4, 8, 8 } })
        initialize_weights(gen)
        local low_res = 24
        local x = tide.randn({ 2, 3, low_res, low_res })
        local gen_out = gen(x)
        local disc_out = disc(gen_out)
        assert.are.same({ 2, 3, 96, 96 }, gen_out.shape)
        assert.are.same({ 2, 1 }, disc_out.shape)

        -- train.py's step: the critic on real/fake, then the generator's l1 + VGG + adversarial
        local high_res = tide.rand(2, 3, 96, 96) * 2 - 1
        local opt_gen = optim.Adam(gen:parameters(), { lr = 1e-4, betas = { 0.0, 0.9 } })
        local opt_disc = optim.Adam(disc:parameters(), { lr = 1e-4, betas = { 0.0, 0.9 } })
        local l1 = nn.L1Loss()
        local vgg_loss = VGGLoss()
        local g0, d0 = snapshot(gen), snapshot(disc)
        local fake = gen(x)
        local critic_real = disc(high_res)
        local critic_fake = disc(fake:detach())
        local loss_critic = -(tide.mean(critic_real) - tide.mean(critic_fake))
        opt_disc:zero_grad()
        loss_critic:backward()
        opt_disc:step()
        assert.is_true(changed(disc, d0))
        assert.is_false(changed(gen, g0))
        d0 = snapshot(disc)
        local v0 = snapshot(vgg_loss)
        -- l1_loss = 1e-2 * l1(fake, high_res); adversarial_loss = 5e-3 * -torch.mean(disc(fake))
        local l1_loss = 1e-2 * l1(fake, high_res)
        local adversarial_loss = 5e-3 * -tide.mean(disc(fake))
        local loss_for_vgg = vgg_loss(fake, high_res)
        local gen_loss = l1_loss + loss_for_vgg + adversarial_loss
        opt_gen:zero_grad()
        gen_loss:backward()
        opt_gen:step()
        assert_finite(loss_critic:item(), "loss_critic")
        assert_finite(gen_loss:item(), "gen_loss")
        assert.is_true(changed(gen, g0))
        assert.is_false(changed(disc, d0))
        assert.is_false(changed(vgg_loss, v0))
        assert.is_nil(vgg_loss.vgg[1].weight.grad)
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. GANs/SRGAN/model.py
---------------------------------------------------------------------------------------------
describe("SRGAN model.py", function()
    local ConvBlock = nn.Module:extend("ConvBlock")
    nn.signature(ConvBlock, [[in_channels, out_channels, discriminator=False, use_act=True,
        use_bn=True, **kwargs]])
    function ConvBlock:init(in_channels, out_channels, discriminator, use_act, use_bn, kwargs)
        self.use_act = use_act
        -- self.cnn = nn.Conv2d(in_channels, out_channels, **kwargs, bias=not use_bn)
        self.cnn = nn.Conv2d(in_channels, out_channels, merge(kwargs, { bias = not use_bn }))
        -- self.bn = nn.BatchNorm2d(out_channels) if use_bn else nn.Identity()
        self.bn = use_bn and nn.BatchNorm2d(out_channels) or nn.Identity()
        -- self.act = (nn.LeakyReLU(0.2, inplace=True) if discriminator else nn.PReLU(num_parameters=out_channels))
        self.act = discriminator and nn.LeakyReLU(0.2, { inplace = true })
            or nn.PReLU({ num_parameters = out_channels })
    end
    function ConvBlock:forward(x)
        -- return self.act(self.bn(self.cnn(x))) if self.use_act else self.bn(self.cnn(x))
        if self.use_act then return self.act(self.bn(self.cnn(x))) end
        return self.bn(self.cnn(x))
    end

    local UpsampleBlock = nn.Module:extend("UpsampleBlock")
    function UpsampleBlock:init(in_c, scale_factor)
        self.conv = nn.Conv2d(in_c, in_c * scale_factor ^ 2, 3, 1, 1)
        self.ps = nn.PixelShuffle(scale_factor) -- in_c * 4, H, W --> in_c, H*2, W*2
        self.act = nn.PReLU({ num_parameters = in_c })
    end
    function UpsampleBlock:forward(x)
        return self.act(self.ps(self.conv(x)))
    end

    local ResidualBlock = nn.Module:extend("ResidualBlock")
    function ResidualBlock:init(in_channels)
        self.block1 = ConvBlock(in_channels, in_channels, { kernel_size = 3, stride = 1, padding = 1 })
        self.block2 = ConvBlock(in_channels, in_channels,
            { kernel_size = 3, stride = 1, padding = 1, use_act = false })
    end
    function ResidualBlock:forward(x)
        local out = self.block1(x)
        out = self.block2(out)
        return out + x
    end

    local Generator = nn.Module:extend("Generator")
    nn.signature(Generator, "in_channels=3, num_channels=64, num_blocks=16")
    function Generator:init(in_channels, num_channels, num_blocks)
        self.initial = ConvBlock(in_channels, num_channels,
            { kernel_size = 9, stride = 1, padding = 4, use_bn = false })
        -- self.residuals = nn.Sequential(*[ResidualBlock(num_channels) for _ in range(num_blocks)])
        local res = {}
        for i = 1, num_blocks do res[i] = ResidualBlock(num_channels) end
        self.residuals = nn.Sequential(unpack(res))
        self.convblock = ConvBlock(num_channels, num_channels,
            { kernel_size = 3, stride = 1, padding = 1, use_act = false })
        self.upsamples = nn.Sequential(UpsampleBlock(num_channels, 2), UpsampleBlock(num_channels, 2))
        self.final = nn.Conv2d(num_channels, in_channels, { kernel_size = 9, stride = 1, padding = 4 })
    end
    function Generator:forward(x)
        local initial = self.initial(x)
        x = self.residuals(initial)
        x = self.convblock(x) + initial
        x = self.upsamples(x)
        return tide.tanh(self.final(x))
    end

    local Discriminator = nn.Module:extend("Discriminator")
    nn.signature(Discriminator, "in_channels=3, features=[64, 64, 128, 128, 256, 256, 512, 512]")
    function Discriminator:init(in_channels, features)
        local blocks = {}
        for idx0, feature in ipairs(features) do
            local idx = idx0 - 1
            blocks[#blocks + 1] = ConvBlock(in_channels, feature, {
                kernel_size = 3,
                stride = 1 + idx % 2,
                padding = 1,
                discriminator = true,
                use_act = true,
                -- use_bn=False if idx == 0 else True,
                use_bn = idx ~= 0,
            })
            in_channels = feature
        end
        self.blocks = nn.Sequential(unpack(blocks))
        self.classifier = nn.Sequential(
            nn.AdaptiveAvgPool2d({ 6, 6 }),
            nn.Flatten(),
            -- nn.Linear(512*6*6, 1024)  (features[-1]: shrunk)
            nn.Linear(features[#features] * 6 * 6, 1024),
            nn.LeakyReLU(0.2, { inplace = true }),
            nn.Linear(1024, 1)
        )
    end
    function Discriminator:forward(x)
        x = self.blocks(x)
        return self.classifier(x)
    end

    it("test(): shapes under torch.cuda.amp.autocast(), the blocks' layers, one BCE step each", function()
        tide.manual_seed(5)
        local low_resolution = 24 -- 96x96 -> 24x24
        local gen, disc, gen_out, disc_out
        -- with torch.cuda.amp.autocast():
        tide.cuda.amp.autocast(function()
            local x = tide.randn({ 2, 3, low_resolution, low_resolution })
            gen = Generator({ num_channels = 8, num_blocks = 2 })
            gen_out = gen(x)
            disc = Discriminator({ features = { 4, 4, 8, 8 } })
            disc_out = disc(gen_out)
        end)
        assert.are.same({ 2, 3, 96, 96 }, gen_out.shape)
        assert.are.same({ 2, 1 }, disc_out.shape)
        -- bias=not use_bn; PReLU's num_parameters; the first discriminator block without bn
        assert.is_nil(gen.residuals[1].block1.cnn.bias)
        assert.is_not_nil(gen.initial.cnn.bias)
        assert.are.same({ 8 }, gen.initial.act.weight.shape)
        assert.is_true(tide.isinstance(disc.blocks[1].bn, nn.Identity))
        assert.is_true(tide.isinstance(disc.blocks[2].bn, nn.BatchNorm2d))
        assert.is_true(tide.isinstance(disc.blocks[1].act, nn.LeakyReLU))
        assert.are.same({ 2, 2 }, disc.blocks[2].cnn.stride)

        -- train.py: BCEWithLogitsLoss for the discriminator, then mse + adversarial for gen
        local bce, mse = nn.BCEWithLogitsLoss(), nn.MSELoss()
        local opt_gen = optim.Adam(gen:parameters(), { lr = 1e-4, betas = { 0.9, 0.999 } })
        local opt_disc = optim.Adam(disc:parameters(), { lr = 1e-4, betas = { 0.9, 0.999 } })
        local low_res, high_res = tide.rand(2, 3, 24, 24), tide.rand(2, 3, 96, 96) * 2 - 1
        local g0, d0 = snapshot(gen), snapshot(disc)
        local fake = gen(low_res)
        local disc_real = disc(high_res)
        local disc_fake = disc(fake:detach())
        -- disc_loss_real = bce(disc_real, torch.ones_like(disc_real) - 0.1 * torch.rand_like(disc_real))
        local disc_loss_real = bce(disc_real, tide.ones_like(disc_real) - 0.1 * tide.rand_like(disc_real))
        local disc_loss_fake = bce(disc_fake, tide.zeros_like(disc_fake))
        local loss_disc = disc_loss_fake + disc_loss_real
        opt_disc:zero_grad()
        loss_disc:backward()
        opt_disc:step()
        assert.is_true(changed(disc, d0))
        assert.is_false(changed(gen, g0))
        d0 = snapshot(disc)
        disc_fake = disc(fake)
        local adversarial_loss = 1e-3 * bce(disc_fake, tide.ones_like(disc_fake))
        local loss_for_vgg = mse(fake, high_res)
        local gen_loss = loss_for_vgg + adversarial_loss
        opt_gen:zero_grad()
        gen_loss:backward()
        opt_gen:step()
        assert_finite(loss_disc:item(), "loss_disc")
        assert_finite(gen_loss:item(), "gen_loss")
        assert.is_true(changed(gen, g0))
    end)
end)

describe("nn.signature with **kwargs", function()
    it("gathers the other names; **kwargs must be last; without it an unknown name raises", function()
        local A = nn.Module:extend("A")
        function A:init(a, b, kw) self.a, self.b, self.kw = a, b, kw end
        nn.signature(A, "a, b=2, **kw")
        local m = A(1, { c = 3, b = 4 })
        assert.are.same({ 1, 4 }, { m.a, m.b })
        assert.are.same({ c = 3 }, m.kw)
        assert.are.same({}, A(1).kw)
        local B = nn.Module:extend("B")
        function B:init(a) self.a = a end
        assert.has_error(function() nn.signature(B, "**kw, a") end,
            "tide: nn.signature: B: **kw must be the last parameter (Python's SyntaxError)")
        nn.signature(B, "a")
        assert.has_error(function() B(1, { c = 3 }) end)
        local C = nn.Module:extend("C")
        function C:init() end
        assert.has_error(function() nn.signature(C, "*args") end,
            "tide: nn.signature: C: *args is not supported; list the parameters by name")
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. GANs/CycleGAN/generator_model.py and discriminator_model.py
---------------------------------------------------------------------------------------------
describe("CycleGAN generator_model.py / discriminator_model.py", function()
    local ConvBlock = nn.Module:extend("ConvBlock")
    nn.signature(ConvBlock, "in_channels, out_channels, down=True, use_act=True, **kwargs")
    function ConvBlock:init(in_channels, out_channels, down, use_act, kwargs)
        self.conv = nn.Sequential(
            -- nn.Conv2d(in_channels, out_channels, padding_mode="reflect", **kwargs) if down
            -- else nn.ConvTranspose2d(in_channels, out_channels, **kwargs),
            down and nn.Conv2d(in_channels, out_channels, merge(kwargs, { padding_mode = "reflect" }))
                or nn.ConvTranspose2d(in_channels, out_channels, kwargs),
            nn.InstanceNorm2d(out_channels),
            -- nn.ReLU(inplace=True) if use_act else nn.Identity()
            use_act and nn.ReLU({ inplace = true }) or nn.Identity()
        )
    end
    function ConvBlock:forward(x)
        return self.conv(x)
    end

    local ResidualBlock = nn.Module:extend("ResidualBlock")
    function ResidualBlock:init(channels)
        self.block = nn.Sequential(
            ConvBlock(channels, channels, { kernel_size = 3, padding = 1 }),
            ConvBlock(channels, channels, { use_act = false, kernel_size = 3, padding = 1 })
        )
    end
    function ResidualBlock:forward(x)
        return x + self.block(x)
    end

    local Generator = nn.Module:extend("Generator")
    nn.signature(Generator, "img_channels, num_features = 64, num_residuals=9")
    function Generator:init(img_channels, num_features, num_residuals)
        self.initial = nn.Sequential(
            nn.Conv2d(img_channels, num_features,
                { kernel_size = 7, stride = 1, padding = 3, padding_mode = "reflect" }),
            nn.InstanceNorm2d(num_features),
            nn.ReLU({ inplace = true })
        )
        self.down_blocks = nn.ModuleList({
            ConvBlock(num_features, num_features * 2, { kernel_size = 3, stride = 2, padding = 1 }),
            ConvBlock(num_features * 2, num_features * 4, { kernel_size = 3, stride = 2, padding = 1 }),
        })
        -- self.res_blocks = nn.Sequential(*[ResidualBlock(num_features*4) for _ in range(num_residuals)])
        local res = {}
        for i = 1, num_residuals do res[i] = ResidualBlock(num_features * 4) end
        self.res_blocks = nn.Sequential(unpack(res))
        self.up_blocks = nn.ModuleList({
            ConvBlock(num_features * 4, num_features * 2,
                { down = false, kernel_size = 3, stride = 2, padding = 1, output_padding = 1 }),
            ConvBlock(num_features * 2, num_features * 1,
                { down = false, kernel_size = 3, stride = 2, padding = 1, output_padding = 1 }),
        })
        self.last = nn.Conv2d(num_features * 1, img_channels,
            { kernel_size = 7, stride = 1, padding = 3, padding_mode = "reflect" })
    end
    function Generator:forward(x)
        x = self.initial(x)
        -- for layer in self.down_blocks:
        for _, layer in ipairs(self.down_blocks) do
            x = layer(x)
        end
        x = self.res_blocks(x)
        for _, layer in ipairs(self.up_blocks) do
            x = layer(x)
        end
        return tide.tanh(self.last(x))
    end

    local Block = nn.Module:extend("Block")
    function Block:init(in_channels, out_channels, stride)
        self.conv = nn.Sequential(
            -- nn.Conv2d(in_channels, out_channels, 4, stride, 1, bias=True, padding_mode="reflect"),
            nn.Conv2d(in_channels, out_channels, 4, stride, 1, { bias = true, padding_mode = "reflect" }),
            nn.InstanceNorm2d(out_channels),
            nn.LeakyReLU(0.2, { inplace = true })
        )
    end
    function Block:forward(x)
        return self.conv(x)
    end
    nn.signature(Block, "in_channels, out_channels, stride")

    local Discriminator = nn.Module:extend("Discriminator")
    nn.signature(Discriminator, "in_channels=3, features=[64, 128, 256, 512]")
    function Discriminator:init(in_channels, features)
        self.initial = nn.Sequential(
            nn.Conv2d(
                in_channels,
                -- features[0],
                features[1],
                { kernel_size = 4, stride = 2, padding = 1, padding_mode = "reflect" }
            ),
            nn.LeakyReLU(0.2, { inplace = true })
        )
        local layers = {}
        in_channels = features[1]
        -- for feature in features[1:]:
        for k = 2, #features do
            local feature = features[k]
            -- layers.append(Block(in_channels, feature, stride=1 if feature==features[-1] else 2))
            layers[#layers + 1] = Block(in_channels, feature, { stride = feature == features[#features] and 1 or 2 })
            in_channels = feature
        end
        layers[#layers + 1] = nn.Conv2d(in_channels, 1,
            { kernel_size = 4, stride = 1, padding = 1, padding_mode = "reflect" })
        self.model = nn.Sequential(unpack(layers))
    end
    function Discriminator:forward(x)
        x = self.initial(x)
        return tide.sigmoid(self.model(x))
    end

    it("test()s: Generator(img_channels, 9) keeps the size; the PatchGAN's shape", function()
        tide.manual_seed(6)
        local img_channels, img_size = 3, 16
        local x = tide.randn({ 2, img_channels, img_size, img_size })
        local gen = Generator(img_channels, 9)
        assert.are.same({ 2, img_channels, img_size, img_size }, gen(x).shape)
        assert.are.equal("reflect", gen.initial[1].padding_mode)
        assert.are.same({ 1, 1 }, gen.up_blocks[1].conv[1].output_padding)
        local model = Discriminator({ in_channels = 3, features = { 4, 8, 16, 32 } })
        local preds = model(tide.randn({ 2, 3, 32, 32 }))
        -- 32 -> 16 -> 8 -> 4 -> 4 (stride 1) -> 3
        assert.are.same({ 2, 1, 2, 2 }, preds.shape)
    end)

    it("reflect-padded Conv2d, ConvTranspose2d with output_padding, InstanceNorm2d: PyTorch's values", function()
        local x = tide.arange(2 * 3 * 5 * 5):float():reshape(2, 3, 5, 5):sin()
        local c = ConvBlock(3, 2, { use_act = false, kernel_size = 3, stride = 2, padding = 1 })
        local t = ConvBlock(2, 3, { down = false, use_act = false, kernel_size = 3, stride = 2, padding = 1,
            output_padding = 1 })
        tide.no_grad(function()
            c.conv[1].weight:copy_(tide.arange(54):float():reshape(2, 3, 3, 3):cos() * 0.1)
            c.conv[1].bias:fill_(0.1)
            t.conv[1].weight:copy_(tide.arange(54):float():reshape(2, 3, 3, 3):sin() * 0.1)
            t.conv[1].bias:fill_(-0.1)
        end)
        -- (c's InstanceNorm2d sits between the two here; PyTorch's numbers are for that order)
        local y = t(c.conv[1](x))
        assert.are.same({ 2, 3, 6, 6 }, y.shape)
        local w = tide.arange(y:numel()):float():reshape(unpack(y.shape)):cos()
        assert.is_true(math.abs((y * w):sum():item() - -1.5455071926116943) < 1e-4)
    end)

    it("train.py's step: MSE adversarial losses, L1 cycle and identity, two generators", function()
        tide.manual_seed(7)
        local disc_H = Discriminator({ in_channels = 3, features = { 4, 8, 8, 8 } })
        local disc_Z = Discriminator({ in_channels = 3, features = { 4, 8, 8, 8 } })
        local gen_Z = Generator(3, { num_features = 4, num_residuals = 1 })
        local gen_H = Generator(3, { num_features = 4, num_residuals = 1 })
        -- opt_disc = optim.Adam(list(disc_H.parameters()) + list(disc_Z.parameters()), lr=..., betas=(0.5, 0.999))
        local dparams, gparams = disc_H:parameters(), gen_Z:parameters()
        for _, p in ipairs(disc_Z:parameters()) do dparams[#dparams + 1] = p end
        for _, p in ipairs(gen_H:parameters()) do gparams[#gparams + 1] = p end
        local opt_disc = optim.Adam(dparams, { lr = 1e-3, betas = { 0.5, 0.999 } })
        local opt_gen = optim.Adam(gparams, { lr = 1e-3, betas = { 0.5, 0.999 } })
        local L1, mse = nn.L1Loss(), nn.MSELoss()
        local zebra, horse = tide.rand(1, 3, 32, 32) * 2 - 1, tide.rand(1, 3, 32, 32) * 2 - 1
        local g0, d0 = snapshot(gen_Z), snapshot(disc_H)
        local fake_horse = gen_H(zebra)
        local D_H_real = disc_H(horse)
        local D_H_fake = disc_H(fake_horse:detach())
        local D_H_loss = mse(D_H_real, tide.ones_like(D_H_real)) + mse(D_H_fake, tide.zeros_like(D_H_fake))
        local fake_zebra = gen_Z(horse)
        local D_Z_real = disc_Z(zebra)
        local D_Z_fake = disc_Z(fake_zebra:detach())
        local D_Z_loss = mse(D_Z_real, tide.ones_like(D_Z_real)) + mse(D_Z_fake, tide.zeros_like(D_Z_fake))
        local D_loss = (D_H_loss + D_Z_loss) / 2
        opt_disc:zero_grad()
        D_loss:backward()
        opt_disc:step()
        assert.is_true(changed(disc_H, d0))
        assert.is_false(changed(gen_Z, g0))
        d0 = snapshot(disc_H)
        D_H_fake = disc_H(fake_horse)
        D_Z_fake = disc_Z(fake_zebra)
        local loss_G_H = mse(D_H_fake, tide.ones_like(D_H_fake))
        local loss_G_Z = mse(D_Z_fake, tide.ones_like(D_Z_fake))
        local cycle_zebra = gen_Z(fake_horse)
        local cycle_horse = gen_H(fake_zebra)
        local cycle_loss = L1(zebra, cycle_zebra) + L1(horse, cycle_horse)
        local identity_loss = L1(zebra, gen_Z(zebra)) + L1(horse, gen_H(horse))
        local G_loss = loss_G_Z + loss_G_H + cycle_loss * 10 + identity_loss * 0.0
        opt_gen:zero_grad()
        G_loss:backward()
        opt_gen:step()
        assert_finite(D_loss:item(), "D_loss")
        assert_finite(G_loss:item(), "G_loss")
        assert.is_true(changed(gen_Z, g0))
        assert.is_false(changed(disc_H, d0))
    end)
end)
