-- spec/support/cyclegan_networks.lua — junyanz/pytorch-CycleGAN-and-pix2pix models/networks.py
-- ported line for line (Identity, get_norm_layer, get_scheduler, init_weights/init_net, GANLoss,
-- cal_gradient_penalty, ResnetBlock/ResnetGenerator, UnetSkipConnectionBlock/UnetGenerator,
-- NLayerDiscriminator, PixelDiscriminator), shared by the specs that port its models:
-- spec/ported_scripts31_spec.lua (CycleGAN) and spec/ported_scripts59_spec.lua (pix2pix).
-- networks.py is the current master's (GANLoss(gan_mode), the wgangp penalty, Identity). The
-- Python line stands above each Lua line that differs from it; functools.partial is
-- tide.utils.partial (norm_layer.func as PyTorch's).
local tide = require("tide")
local nn = tide.nn
local init = nn.init
local lr_scheduler = tide.optim.lr_scheduler
local unpack = table.unpack or unpack -- luacheck: ignore

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

-- functools.partial(cls, **kw), whose .func get_norm_layer's callers read
local partial = tide.utils.partial

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


return {
    Identity = Identity,
    partial = partial,
    get_norm_layer = get_norm_layer,
    use_bias_of = use_bias_of,
    get_scheduler = get_scheduler,
    init_weights = init_weights,
    init_net = init_net,
    GANLoss = GANLoss,
    cal_gradient_penalty = cal_gradient_penalty,
    ResnetBlock = ResnetBlock,
    ResnetGenerator = ResnetGenerator,
    UnetSkipConnectionBlock = UnetSkipConnectionBlock,
    UnetGenerator = UnetGenerator,
    NLayerDiscriminator = NLayerDiscriminator,
    PixelDiscriminator = PixelDiscriminator,
}
