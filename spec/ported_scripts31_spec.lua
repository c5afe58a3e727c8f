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
local init = nn.init
local optim = tide.optim
local lr_scheduler = tide.optim.lr_scheduler
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
-- models/networks.py
---------------------------------------------------------------------------------------------
-- class Identity(nn.Module):
local Identity = nn.Module:extend("Identity")
function Identity:forward(x)
    return x
end

-- functools.partial(cls, **kw): a callable that remembers .func, as Python's partial
local function partial(func, kw)
    return setmetatable({ func = func }, {
        __call = function(_, n)
            return func(n, kw)
        end,
    })
end

-- def get_norm_layer(norm_type='instance'):
local function get_norm_layer(norm_type)
    norm_type = norm_type or "instance"
    local norm_layer
    if norm_type == "batch" then
        -- norm_layer = functools.partial(nn.BatchNorm2d, affine=True, track_running_stats=True)
        norm_layer = partial(nn.BatchNorm2d, { affine = true, track_running_stats = true })
    elseif norm_type == "instance" then
        -- norm_layer = functools.partial(nn.InstanceNorm2d, affine=False, track_running_stats=False)
        norm_layer = partial(nn.InstanceNorm2d, { affine = false, track_running_stats = false })
    elseif norm_type == "none" then
        norm_layer = function(x) return Identity() end -- luacheck: ignore x
    else
        error(("normalization layer [%s] is not found"):format(norm_type))
    end
    return norm_layer
end

-- if type(norm_layer) == functools.partial: use_bias = norm_layer.func == nn.InstanceNorm2d
-- else: use_bias = norm_layer == nn.InstanceNorm2d
local function use_bias_of(norm_layer)
    if type(norm_layer) == "table" and norm_layer.func then
        return norm_layer.func == nn.InstanceNorm2d
    end
    return norm_layer == nn.InstanceNorm2d
end

-- def get_scheduler(optimizer, opt):
local function get_scheduler(optimizer, opt)
    local scheduler
    if opt.lr_policy == "linear" then
        local function lambda_rule(epoch)
            -- lr_l = 1.0 - max(0, epoch + opt.epoch_count - opt.n_epochs) / float(opt.n_epochs_decay + 1)
            local lr_l = 1.0 - math.max(0, epoch + opt.epoch_count - opt.n_epochs) / (opt.n_epochs_decay + 1)
            return lr_l
        end
        -- scheduler = lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda_rule)
        scheduler = lr_scheduler.LambdaLR(optimizer, { lr_lambda = lambda_rule })
    elseif opt.lr_policy == "step" then
        -- scheduler = lr_scheduler.StepLR(optimizer, step_size=opt.lr_decay_iters, gamma=0.1)
        scheduler = lr_scheduler.StepLR(optimizer, { step_size = opt.lr_decay_iters, gamma = 0.1 })
    elseif opt.lr_policy == "plateau" then
        -- scheduler = lr_scheduler.ReduceLROnPlateau(optimizer, mode='min', factor=0.2, threshold=0.01, patience=5)
        scheduler = lr_scheduler.ReduceLROnPlateau(optimizer,
            { mode = "min", factor = 0.2, threshold = 0.01, patience = 5 })
    elseif opt.lr_policy == "cosine" then
        -- scheduler = lr_scheduler.CosineAnnealingLR(optimizer, T_max=opt.n_epochs, eta_min=0)
        scheduler = lr_scheduler.CosineAnnealingLR(optimizer, { T_max = opt.n_epochs, eta_min = 0 })
    else
        error(("learning rate policy [%s] is not implemented"):format(opt.lr_policy))
    end
    return scheduler
end

-- def init_weights(net, init_type='normal', init_gain=0.02):
local function init_weights(net, init_type, init_gain)
    init_type, init_gain = init_type or "normal", init_gain or 0.02
    local function init_func(m) -- define the initialization function
        -- classname = m.__class__.__name__
        local classname = m.__class__.__name__
        -- if hasattr(m, 'weight') and (classname.find('Conv') != -1 or classname.find('Linear') != -1):
        if m.weight ~= nil and (classname:find("Conv") or classname:find("Linear")) then
            if init_type == "normal" then
                init.normal_(m.weight.data, 0.0, init_gain)
            elseif init_type == "xavier" then
                -- init.xavier_normal_(m.weight.data, gain=init_gain)
                init.xavier_normal_(m.weight.data, { gain = init_gain })
            elseif init_type == "kaiming" then
                -- init.kaiming_normal_(m.weight.data, a=0, mode='fan_in')
                init.kaiming_normal_(m.weight.data, { a = 0, mode = "fan_in" })
            elseif init_type == "orthogonal" then
                -- init.orthogonal_(m.weight.data, gain=init_gain)
                init.orthogonal_(m.weight.data, { gain = init_gain })
            else
                error(("initialization method [%s] is not implemented"):format(init_type))
            end
            -- if hasattr(m, 'bias') and m.bias is not None:
            if m.bias ~= nil then
                init.constant_(m.bias.data, 0.0)
            end
        -- elif classname.find('BatchNorm2d') != -1:
        elseif classname:find("BatchNorm2d") then
            init.normal_(m.weight.data, 1.0, init_gain)
            init.constant_(m.bias.data, 0.0)
        end
    end
    -- net.apply(init_func)  # apply the initialization function <init_func>
    net:apply(init_func)
end

-- def init_net(net, init_type='normal', init_gain=0.02, gpu_ids=[]):
local function init_net(net, init_type, init_gain, gpu_ids)
    gpu_ids = gpu_ids or {}
    if #gpu_ids > 0 then
        assert(tide.cuda.is_available())
        net:to(gpu_ids[1])
        net = nn.DataParallel(net, gpu_ids) -- multi-GPUs
    end
    -- init_weights(net, init_type, init_gain=init_gain)
    init_weights(net, init_type, init_gain)
    return net
end

-- class GANLoss(nn.Module):
local GANLoss = nn.Module:extend("GANLoss")
-- def __init__(self, gan_mode, target_real_label=1.0, target_fake_label=0.0):
function GANLoss:init(gan_mode, target_real_label, target_fake_label)
    -- self.register_buffer('real_label', torch.tensor(target_real_label))
    self:register_buffer("real_label", tide.tensor(target_real_label or 1.0))
    self:register_buffer("fake_label", tide.tensor(target_fake_label or 0.0))
    self.gan_mode = gan_mode
    if gan_mode == "lsgan" then
        self.loss = nn.MSELoss()
    elseif gan_mode == "vanilla" then
        self.loss = nn.BCEWithLogitsLoss()
    -- elif gan_mode in ['wgangp']:
    elseif gan_mode == "wgangp" then
        self.loss = nil
    else
        error(("gan mode %s not implemented"):format(gan_mode))
    end
end

function GANLoss:get_target_tensor(prediction, target_is_real)
    local target_tensor
    if target_is_real then
        target_tensor = self.real_label
    else
        target_tensor = self.fake_label
    end
    return target_tensor:expand_as(prediction)
end

-- def __call__(self, prediction, target_is_real):
function GANLoss:forward(prediction, target_is_real)
    local loss
    if self.gan_mode == "lsgan" or self.gan_mode == "vanilla" then
        local target_tensor = self:get_target_tensor(prediction, target_is_real)
        loss = self.loss(prediction, target_tensor)
    elseif self.gan_mode == "wgangp" then
        if target_is_real then
            loss = -prediction:mean()
        else
            loss = prediction:mean()
        end
    end
    return loss
end

-- def cal_gradient_penalty(netD, real_data, fake_data, device, type='mixed', constant=1.0, lambda_gp=10.0):
local function cal_gradient_penalty(netD, real_data, fake_data, device, type_, constant, lambda_gp)
    type_, constant, lambda_gp = type_ or "mixed", constant or 1.0, lambda_gp or 10.0
    if lambda_gp > 0.0 then
        local interpolatesv
        if type_ == "real" then -- either use real images, fake images, or a linear interpolation of two.
            interpolatesv = real_data
        elseif type_ == "fake" then
            interpolatesv = fake_data
        elseif type_ == "mixed" then
            -- alpha = torch.rand(real_data.shape[0], 1, device=device)
            local alpha = tide.rand(real_data.shape[1], 1, { device = device })
            -- alpha = alpha.expand(real_data.shape[0], real_data.nelement() // real_data.shape[0]).contiguous().view(*real_data.shape)
            alpha = alpha:expand(real_data.shape[1], real_data:nelement() / real_data.shape[1]):contiguous()
                :view(real_data.shape)
            interpolatesv = alpha * real_data + ((1 - alpha) * fake_data)
        else
            error(("%s not implemented"):format(type_))
        end
        interpolatesv:requires_grad_(true)
        local disc_interpolates = netD(interpolatesv)
        -- gradients = torch.autograd.grad(outputs=disc_interpolates, inputs=interpolatesv,
        --                                 grad_outputs=torch.ones(disc_interpolates.size()).to(device),
        --                                 create_graph=True, retain_graph=True, only_inputs=True)
        local gradients = tide.autograd.grad({ outputs = disc_interpolates, inputs = interpolatesv,
            grad_outputs = tide.ones(disc_interpolates:size()):to(device),
            create_graph = true, retain_graph = true, only_inputs = true })
        -- gradients = gradients[0].view(real_data.size(0), -1)  # flat the data
        gradients = gradients[1]:view(real_data:size(1), -1)
        -- gradient_penalty = (((gradients + 1e-16).norm(2, dim=1) - constant) ** 2).mean() * lambda_gp
        local gradient_penalty = (((gradients + 1e-16):norm(2, { dim = 2 }) - constant) ^ 2):mean() * lambda_gp
        return gradient_penalty, gradients
    else
        return 0.0, nil
    end
end

-- class ResnetBlock(nn.Module):
local ResnetBlock = nn.Module:extend("ResnetBlock")
function ResnetBlock:init(dim, padding_type, norm_layer, use_dropout, use_bias)
    self.conv_block = self:build_conv_block(dim, padding_type, norm_layer, use_dropout, use_bias)
end

function ResnetBlock:build_conv_block(dim, padding_type, norm_layer, use_dropout, use_bias)
    local conv_block = {}
    local p = 0
    if padding_type == "reflect" then
        extend(conv_block, { nn.ReflectionPad2d(1) })
    elseif padding_type == "replicate" then
        extend(conv_block, { nn.ReplicationPad2d(1) })
    elseif padding_type == "zero" then
        p = 1
    else
        error(("padding [%s] is not implemented"):format(padding_type))
    end

    -- conv_block += [nn.Conv2d(dim, dim, kernel_size=3, padding=p, bias=use_bias), norm_layer(dim), nn.ReLU(True)]
    extend(conv_block, { nn.Conv2d(dim, dim, { kernel_size = 3, padding = p, bias = use_bias }), norm_layer(dim),
        nn.ReLU(true) })
    if use_dropout then
        extend(conv_block, { nn.Dropout(0.5) })
    end

    p = 0
    if padding_type == "reflect" then
        extend(conv_block, { nn.ReflectionPad2d(1) })
    elseif padding_type == "replicate" then
        extend(conv_block, { nn.ReplicationPad2d(1) })
    elseif padding_type == "zero" then
        p = 1
    else
        error(("padding [%s] is not implemented"):format(padding_type))
    end
    extend(conv_block, { nn.Conv2d(dim, dim, { kernel_size = 3, padding = p, bias = use_bias }), norm_layer(dim) })

    -- return nn.Sequential(*conv_block)
    return nn.Sequential(unpack(conv_block))
end

function ResnetBlock:forward(x)
    local out = x + self.conv_block(x) -- add skip connections
    return out
end

-- class ResnetGenerator(nn.Module):
local ResnetGenerator = nn.Module:extend("ResnetGenerator")
-- def __init__(self, input_nc, output_nc, ngf=64, norm_layer=nn.BatchNorm2d, use_dropout=False, n_blocks=6, padding_type='reflect'):
nn.signature(ResnetGenerator,
    "input_nc, output_nc, ngf=64, norm_layer=None, use_dropout=False, n_blocks=6, padding_type='reflect'")
function ResnetGenerator:init(input_nc, output_nc, ngf, norm_layer, use_dropout, n_blocks, padding_type)
    norm_layer = norm_layer or nn.BatchNorm2d
    assert(n_blocks >= 0)
    local use_bias = use_bias_of(norm_layer)

    -- model = [nn.ReflectionPad2d(3), nn.Conv2d(input_nc, ngf, kernel_size=7, padding=0, bias=use_bias), norm_layer(ngf), nn.ReLU(True)]
    local model = { nn.ReflectionPad2d(3),
        nn.Conv2d(input_nc, ngf, { kernel_size = 7, padding = 0, bias = use_bias }),
        norm_layer(ngf),
        nn.ReLU(true) }

    local n_downsampling = 2
    for i = 0, n_downsampling - 1 do -- add downsampling layers
        local mult = 2 ^ i
        extend(model, { nn.Conv2d(ngf * mult, ngf * mult * 2, { kernel_size = 3, stride = 2, padding = 1, bias = use_bias }),
            norm_layer(ngf * mult * 2),
            nn.ReLU(true) })
    end

    local mult = 2 ^ n_downsampling
    for _ = 0, n_blocks - 1 do -- add ResNet blocks
        -- model += [ResnetBlock(ngf * mult, padding_type=padding_type, norm_layer=norm_layer, use_dropout=use_dropout, use_bias=use_bias)]
        extend(model, { ResnetBlock(ngf * mult, padding_type, norm_layer, use_dropout, use_bias) })
    end

    for i = 0, n_downsampling - 1 do -- add upsampling layers
        mult = 2 ^ (n_downsampling - i)
        -- model += [nn.ConvTranspose2d(ngf * mult, int(ngf * mult / 2), kernel_size=3, stride=2, padding=1, output_padding=1, bias=use_bias),
        extend(model, { nn.ConvTranspose2d(ngf * mult, math.floor(ngf * mult / 2),
            { kernel_size = 3, stride = 2, padding = 1, output_padding = 1, bias = use_bias }),
            norm_layer(math.floor(ngf * mult / 2)),
            nn.ReLU(true) })
    end
    extend(model, { nn.ReflectionPad2d(3) })
    extend(model, { nn.Conv2d(ngf, output_nc, { kernel_size = 7, padding = 0 }) })
    extend(model, { nn.Tanh() })

    self.model = nn.Sequential(unpack(model))
end

function ResnetGenerator:forward(input)
    return self.model(input)
end

-- class UnetSkipConnectionBlock(nn.Module):
local UnetSkipConnectionBlock = nn.Module:extend("UnetSkipConnectionBlock")
-- def __init__(self, outer_nc, inner_nc, input_nc=None, submodule=None, outermost=False, innermost=False, norm_layer=nn.BatchNorm2d, use_dropout=False):
nn.signature(UnetSkipConnectionBlock, "outer_nc, inner_nc, input_nc=None, submodule=None, outermost=False, " ..
    "innermost=False, norm_layer=None, use_dropout=False")
function UnetSkipConnectionBlock:init(outer_nc, inner_nc, input_nc, submodule, outermost, innermost, norm_layer,
                                      use_dropout)
    norm_layer = norm_layer or nn.BatchNorm2d
    self.outermost = outermost
    local use_bias = use_bias_of(norm_layer)
    if input_nc == nil then
        input_nc = outer_nc
    end
    -- downconv = nn.Conv2d(input_nc, inner_nc, kernel_size=4, stride=2, padding=1, bias=use_bias)
    local downconv = nn.Conv2d(input_nc, inner_nc, { kernel_size = 4, stride = 2, padding = 1, bias = use_bias })
    local downrelu = nn.LeakyReLU(0.2, true)
    local downnorm = norm_layer(inner_nc)
    local uprelu = nn.ReLU(true)
    local upnorm = norm_layer(outer_nc)

    local model
    if outermost then
        -- upconv = nn.ConvTranspose2d(inner_nc * 2, outer_nc, kernel_size=4, stride=2, padding=1)
        local upconv = nn.ConvTranspose2d(inner_nc * 2, outer_nc, { kernel_size = 4, stride = 2, padding = 1 })
        local down = { downconv }
        local up = { uprelu, upconv, nn.Tanh() }
        -- model = down + [submodule] + up
        model = extend(extend(extend({}, down), { submodule }), up)
    elseif innermost then
        local upconv = nn.ConvTranspose2d(inner_nc, outer_nc, { kernel_size = 4, stride = 2, padding = 1, bias = use_bias })
        local down = { downrelu, downconv }
        local up = { uprelu, upconv, upnorm }
        -- model = down + up
        model = extend(extend({}, down), up)
    else
        local upconv = nn.ConvTranspose2d(inner_nc * 2, outer_nc,
            { kernel_size = 4, stride = 2, padding = 1, bias = use_bias })
        local down = { downrelu, downconv, downnorm }
        local up = { uprelu, upconv, upnorm }

        if use_dropout then
            -- model = down + [submodule] + up + [nn.Dropout(0.5)]
            model = extend(extend(extend(extend({}, down), { submodule }), up), { nn.Dropout(0.5) })
        else
            model = extend(extend(extend({}, down), { submodule }), up)
        end
    end

    self.model = nn.Sequential(unpack(model))
end

function UnetSkipConnectionBlock:forward(x)
    if self.outermost then
        return self.model(x)
    else -- add skip connections
        -- return torch.cat([x, self.model(x)], 1)
        return tide.cat({ x, self.model(x) }, 2)
    end
end

-- class UnetGenerator(nn.Module):
local UnetGenerator = nn.Module:extend("UnetGenerator")
nn.signature(UnetGenerator, "input_nc, output_nc, num_downs, ngf=64, norm_layer=None, use_dropout=False")
function UnetGenerator:init(input_nc, output_nc, num_downs, ngf, norm_layer, use_dropout)
    norm_layer = norm_layer or nn.BatchNorm2d
    -- unet_block = UnetSkipConnectionBlock(ngf * 8, ngf * 8, input_nc=None, submodule=None, norm_layer=norm_layer, innermost=True)
    local unet_block = UnetSkipConnectionBlock(ngf * 8, ngf * 8,
        { input_nc = nil, submodule = nil, norm_layer = norm_layer, innermost = true })
    for _ = 0, num_downs - 5 - 1 do -- add intermediate layers with ngf * 8 filters
        unet_block = UnetSkipConnectionBlock(ngf * 8, ngf * 8,
            { input_nc = nil, submodule = unet_block, norm_layer = norm_layer, use_dropout = use_dropout })
    end
    -- gradually reduce the number of filters from ngf * 8 to ngf
    unet_block = UnetSkipConnectionBlock(ngf * 4, ngf * 8, { input_nc = nil, submodule = unet_block, norm_layer = norm_layer })
    unet_block = UnetSkipConnectionBlock(ngf * 2, ngf * 4, { input_nc = nil, submodule = unet_block, norm_layer = norm_layer })
    unet_block = UnetSkipConnectionBlock(ngf, ngf * 2, { input_nc = nil, submodule = unet_block, norm_layer = norm_layer })
    -- self.model = UnetSkipConnectionBlock(output_nc, ngf, input_nc=input_nc, submodule=unet_block, outermost=True, norm_layer=norm_layer)
    self.model = UnetSkipConnectionBlock(output_nc, ngf,
        { input_nc = input_nc, submodule = unet_block, outermost = true, norm_layer = norm_layer })
end

function UnetGenerator:forward(input)
    return self.model(input)
end

-- class NLayerDiscriminator(nn.Module):
local NLayerDiscriminator = nn.Module:extend("NLayerDiscriminator")
nn.signature(NLayerDiscriminator, "input_nc, ndf=64, n_layers=3, norm_layer=None")
function NLayerDiscriminator:init(input_nc, ndf, n_layers, norm_layer)
    norm_layer = norm_layer or nn.BatchNorm2d
    local use_bias = use_bias_of(norm_layer)

    local kw = 4
    local padw = 1
    -- sequence = [nn.Conv2d(input_nc, ndf, kernel_size=kw, stride=2, padding=padw), nn.LeakyReLU(0.2, True)]
    local sequence = { nn.Conv2d(input_nc, ndf, { kernel_size = kw, stride = 2, padding = padw }), nn.LeakyReLU(0.2, true) }
    local nf_mult = 1
    local nf_mult_prev
    for n = 1, n_layers - 1 do -- gradually increase the number of filters
        nf_mult_prev = nf_mult
        nf_mult = math.min(2 ^ n, 8)
        extend(sequence, {
            nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, { kernel_size = kw, stride = 2, padding = padw, bias = use_bias }),
            norm_layer(ndf * nf_mult),
            nn.LeakyReLU(0.2, true),
        })
    end

    nf_mult_prev = nf_mult
    nf_mult = math.min(2 ^ n_layers, 8)
    extend(sequence, {
        nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, { kernel_size = kw, stride = 1, padding = padw, bias = use_bias }),
        norm_layer(ndf * nf_mult),
        nn.LeakyReLU(0.2, true),
    })

    -- sequence += [nn.Conv2d(ndf * nf_mult, 1, kernel_size=kw, stride=1, padding=padw)]  # output 1 channel prediction map
    extend(sequence, { nn.Conv2d(ndf * nf_mult, 1, { kernel_size = kw, stride = 1, padding = padw }) })
    self.model = nn.Sequential(unpack(sequence))
end

function NLayerDiscriminator:forward(input)
    return self.model(input)
end

-- class PixelDiscriminator(nn.Module):
local PixelDiscriminator = nn.Module:extend("PixelDiscriminator")
nn.signature(PixelDiscriminator, "input_nc, ndf=64, norm_layer=None")
function PixelDiscriminator:init(input_nc, ndf, norm_layer)
    norm_layer = norm_layer or nn.BatchNorm2d
    local use_bias = use_bias_of(norm_layer)

    -- self.net = [ ... ]
    local net = {
        nn.Conv2d(input_nc, ndf, { kernel_size = 1, stride = 1, padding = 0 }),
        nn.LeakyReLU(0.2, true),
        nn.Conv2d(ndf, ndf * 2, { kernel_size = 1, stride = 1, padding = 0, bias = use_bias }),
        norm_layer(ndf * 2),
        nn.LeakyReLU(0.2, true),
        nn.Conv2d(ndf * 2, 1, { kernel_size = 1, stride = 1, padding = 0, bias = use_bias }) }

    -- self.net = nn.Sequential(*self.net)
    self.net = nn.Sequential(unpack(net))
end

function PixelDiscriminator:forward(input)
    return self.net(input)
end

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
