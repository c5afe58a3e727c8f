-- ported_scripts47_spec.lua — torchvision's models ported line for line at tiny sizes:
-- models/efficientnet.py (ops/misc.py's SqueezeExcitation, _MBConvConfig/MBConvConfig/FusedMBConvConfig
-- with adjust_channels, adjust_depth and _utils.py's _make_divisible, MBConv, FusedMBConv, EfficientNet
-- with its init loop, _efficientnet_conf for b0 and v2_s), models/mnasnet.py (_InvertedResidual,
-- _stack, _round_to_multiple_of, _scale_depths, MNASNet), models/regnet.py and models/mobilenetv3.py
-- as far as they got. No weights, no pretrained enums: small width/depth multipliers; forwards checked
-- against PyTorch 1.13 on the same deterministic weights (the classes pasted into plain torch), then a
-- few training steps on random data. The Python line stands above each Lua line that differs from it.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local isinstance = tide.isinstance
-- the PyTorch 1.13 outputs of the same models on the same fill (the classes pasted into plain torch)
-- (the Python fill sorts the state_dict by tide's names, whose list indices are 1-based)
local EFFNET_B0_WANT = { -0.21724236011505127, 10.34522819519043, -0.36444640159606934, -9.943695068359375, 1.4365170001983643, -0.21724236011505127, 10.34522819519043, -0.36444640159606934, -9.943695068359375, 1.4365170001983643 }
local EFFNET_V2_WANT = { -0.22186625003814697, 1.8963103294372559, -1.728338599205017, 1.9944933652877808, -2.3617959022521973, -0.22186100482940674, 1.8963061571121216, -1.7283363342285156, 1.9944931268692017, -2.36179780960083 }
local MNASNET_WANT = { 77.18376922607422, -70.82747650146484, 37.34095764160156, 11.86644458770752, -56.689762115478516, 77.18376922607422, -70.82747650146484, 37.3409538269043, 11.866439819335938, -56.689762115478516 }
local REGNET_Y_400MF = { { 1, 3, 6, 6 }, { 48, 104, 208, 440 }, { 8, 8, 8, 8 } }
local REGNET_X_1_6GF = { { 2, 4, 10, 2 }, { 72, 168, 408, 912 }, { 24, 24, 24, 24 } }
local REGNET_WANT = { -4.308675289154053, 5.698633193969727, -4.619386672973633, 3.4976937770843506, -2.229355812072754, -4.325192451477051, 5.7273736000061035, -4.655611991882324, 3.535433053970337, -2.262387752532959 }
local MOBILENETV3_WANT = { -11.30168342590332, 12.206379890441895, 8.901309967041016, -14.046087265014648, -7.319303512573242, -11.30168342590332, 12.206379890441895, 8.901309967041016, -14.046086311340332, -7.319303512573242 }

-- functools.partial(cls, **kw): a function (a table would read as the keyword table when it is
-- the last positional argument of an nn.signature class, as Encoder(..., norm_layer))
local function partial(func, kw)
    return function(...)
        local args = { ... }
        local n = select("#", ...)
        args[n + 1] = kw
        return func(unpack(args, 1, n + 1))
    end
end

-- every float entry of the state_dict, by sorted name, as sin(0.7 j + 1.3 i) / 2: the fill the
-- PyTorch reference applies
local function fill(model)
    local sd = model:state_dict()
    local names = {}
    for name in pairs(sd) do
        names[#names + 1] = name
    end
    table.sort(names)
    tide.no_grad(function()
        for i, name in ipairs(names) do
            local p = sd[name]
            if p:is_floating_point() then
                local v = tide.sin(tide.arange(p:numel(), { dtype = tide.float64 }) * 0.7 + i * 1.3) * 0.5
                if name:match("running_var$") then
                    v = v:abs() + 0.5
                end
                p:copy_(v:view(p:size()):float())
            end
        end
    end)
end

local function check_forward(model, want, hw, nout)
    fill(model)
    model:eval()
    local x = tide.sin(tide.arange(2 * 3 * hw * hw, { dtype = tide.float64 }) * 0.1):view(2, 3, hw, hw):float()
    local y = model(x)
    assert.are.same({ 2, nout }, { y:size(1), y:size(2) })
    local got = y:flatten():tolist()
    local first = {}
    for i = 1, #want do first[i] = got[i] end
    ported.assert_close_list(want, first, 1e-4, "forward")
end

-- a few AdamW steps on one random batch: losses finite and the last below the first
local function train_steps(model, nclasses, hw, steps)
    tide.manual_seed(0)
    local images = tide.randn(4, 3, hw, hw)
    local target = tide.randint(1, nclasses + 1, { 4 })
    local criterion = nn.CrossEntropyLoss({ label_smoothing = 0.1 })
    local optimizer = optim.AdamW(model:parameters(), { lr = 1e-3, weight_decay = 0.05 })
    model:train()
    local losses = {}
    for _ = 1, steps or 4 do
        local output = model(images)
        local loss = criterion(output, target)
        optimizer:zero_grad()
        loss:backward()
        optimizer:step()
        losses[#losses + 1] = loss:item()
        assert_finite(losses[#losses], "loss")
    end
    assert.is_true(losses[#losses] < losses[1], "loss did not decrease: " .. table.concat(losses, " "))
    return losses
end

---------------------------------------------------------------------------------------------
-- torchvision/ops/stochastic_depth.py and ops/misc.py (Permute, Conv2dNormActivation)
---------------------------------------------------------------------------------------------
-- def stochastic_depth(input: Tensor, p: float, mode: str, training: bool = True) -> Tensor:
local function stochastic_depth(input, p, mode, training)
    if training == nil then training = true end
    if p < 0.0 or p > 1.0 then
        error(string.format("drop probability has to be between 0 and 1, but got %s", tostring(p)))
    end
    if mode ~= "batch" and mode ~= "row" then
        error(string.format("mode has to be either 'batch' or 'row', but got %s", tostring(mode)))
    end
    if not training or p == 0.0 then
        return input
    end
    local survival_rate = 1.0 - p
    local size
    if mode == "row" then
        -- size = [input.shape[0]] + [1] * (input.ndim - 1)
        size = tide.Size({ input.shape[1] }) + tide.Size({ 1 }) * (input.ndim - 1)
    else
        -- size = [1] * input.ndim
        size = tide.Size({ 1 }) * input.ndim
    end
    -- noise = torch.empty(size, dtype=input.dtype, device=input.device)
    local noise = tide.empty(size, { dtype = input.dtype, device = input.device })
    noise = noise:bernoulli_(survival_rate)
    if survival_rate > 0.0 then
        noise:div_(survival_rate)
    end
    return input * noise
end

-- class StochasticDepth(nn.Module):
local StochasticDepth = nn.Module:extend("StochasticDepth")
function StochasticDepth:init(p, mode)
    self.p = p
    self.mode = mode
end
function StochasticDepth:forward(input)
    return stochastic_depth(input, self.p, self.mode, self.training)
end
function StochasticDepth:__repr__()
    return string.format("%s(p=%s, mode=%s)", self.__class__.__name__, self.p, self.mode)
end

-- class Permute(torch.nn.Module):
local Permute = nn.Module:extend("Permute")
function Permute:init(dims)
    self.dims = dims
end
function Permute:forward(x)
    -- return torch.permute(x, self.dims)
    return tide.permute(x, self.dims)
end

-- class ConvNormActivation(torch.nn.Sequential) / Conv2dNormActivation, conv_layer=torch.nn.Conv2d
local Conv2dNormActivation = nn.Sequential:extend("Conv2dNormActivation")
-- def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
--     norm_layer=torch.nn.BatchNorm2d, activation_layer=torch.nn.ReLU, dilation=1, inplace=True, bias=None)
nn.signature(Conv2dNormActivation, "in_channels: int, out_channels: int, kernel_size=3, stride=1, " ..
    "padding=None, groups: int = 1, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1, " ..
    "inplace=True, bias=None")
function Conv2dNormActivation:init(in_channels, out_channels, kernel_size, stride, padding, groups,
                                   norm_layer, activation_layer, dilation, inplace, bias)
    if padding == nil then
        -- padding = (kernel_size - 1) // 2 * dilation
        padding = math.floor((kernel_size - 1) / 2) * dilation
    end
    if bias == nil then
        -- bias = norm_layer is None
        bias = not norm_layer
    end
    -- layers = [conv_layer(in_channels, out_channels, kernel_size, stride, padding, dilation=dilation, groups=groups, bias=bias)]
    local layers = { nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
        { dilation = dilation, groups = groups, bias = bias }) }
    -- if norm_layer is not None:
    if norm_layer then
        table.insert(layers, norm_layer(out_channels))
    end
    if activation_layer then
        -- params = {} if inplace is None else {"inplace": inplace}
        local params = inplace == nil and {} or { inplace = inplace }
        -- layers.append(activation_layer(**params))
        table.insert(layers, activation_layer(params))
    end
    -- super().__init__(*layers)
    nn.Sequential.init(self, unpack(layers))
    self.out_channels = out_channels
end

-- copy.copy: a shallow copy keeping the class
local copy = {
    copy = function(o)
        local c = {}
        for k, v in pairs(o) do c[k] = v end
        return setmetatable(c, getmetatable(o))
    end,
}

-- torchvision/models/_utils.py
-- def _make_divisible(v: float, divisor: int, min_value: Optional[int] = None) -> int:
local function _make_divisible(v, divisor, min_value)
    if min_value == nil then
        min_value = divisor
    end
    -- new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    local new_v = math.max(min_value, math.floor(math.floor(v + divisor / 2) / divisor) * divisor)
    -- Make sure that round down does not go down by more than 10%.
    if new_v < 0.9 * v then
        new_v = new_v + divisor
    end
    return new_v
end

-- class SqueezeExcitation(torch.nn.Module):  (torchvision/ops/misc.py)
local SqueezeExcitation = nn.Module:extend("SqueezeExcitation")
-- def __init__(self, input_channels: int, squeeze_channels: int,
--     activation=torch.nn.ReLU, scale_activation=torch.nn.Sigmoid)
nn.signature(SqueezeExcitation, "self, input_channels: int, squeeze_channels: int, " ..
    "activation=torch.nn.ReLU, scale_activation=torch.nn.Sigmoid")
function SqueezeExcitation:init(input_channels, squeeze_channels, activation, scale_activation)
    self.avgpool = nn.AdaptiveAvgPool2d(1)
    self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
    self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
    self.activation = activation()
    self.scale_activation = scale_activation()
end
function SqueezeExcitation:_scale(input)
    local scale = self.avgpool(input)
    scale = self.fc1(scale)
    scale = self.activation(scale)
    scale = self.fc2(scale)
    return self.scale_activation(scale)
end
function SqueezeExcitation:forward(input)
    local scale = self:_scale(input)
    return scale * input
end

---------------------------------------------------------------------------------------------
-- 1. torchvision/models/efficientnet.py
---------------------------------------------------------------------------------------------
describe("torchvision/models/efficientnet.py", function()
    local MBConv, FusedMBConv

    -- @dataclass class _MBConvConfig:
    local _MBConvConfig = ported.class("_MBConvConfig")
    function _MBConvConfig:__init__(expand_ratio, kernel, stride, input_channels, out_channels, num_layers, block)
        self.expand_ratio = expand_ratio
        self.kernel = kernel
        self.stride = stride
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers
        self.block = block
    end
    -- @staticmethod def adjust_channels(channels: int, width_mult: float, min_value: Optional[int] = None) -> int:
    function _MBConvConfig.adjust_channels(channels, width_mult, min_value)
        return _make_divisible(channels * width_mult, 8, min_value)
    end

    -- class MBConvConfig(_MBConvConfig):
    local MBConvConfig = ported.class("MBConvConfig")
    setmetatable(MBConvConfig, { __index = _MBConvConfig, __call = getmetatable(MBConvConfig).__call })
    function MBConvConfig:__init__(expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                                   width_mult, depth_mult, block)
        width_mult = width_mult or 1.0
        depth_mult = depth_mult or 1.0
        -- input_channels = self.adjust_channels(input_channels, width_mult)
        input_channels = self.adjust_channels(input_channels, width_mult)
        out_channels = self.adjust_channels(out_channels, width_mult)
        num_layers = self.adjust_depth(num_layers, depth_mult)
        if block == nil then
            block = MBConv
        end
        -- super().__init__(expand_ratio, kernel, stride, input_channels, out_channels, num_layers, block)
        _MBConvConfig.__init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers, block)
    end
    -- @staticmethod def adjust_depth(num_layers: int, depth_mult: float):
    function MBConvConfig.adjust_depth(num_layers, depth_mult)
        -- return int(math.ceil(num_layers * depth_mult))
        return math.ceil(num_layers * depth_mult)
    end

    -- class FusedMBConvConfig(_MBConvConfig):
    local FusedMBConvConfig = ported.class("FusedMBConvConfig")
    setmetatable(FusedMBConvConfig, { __index = _MBConvConfig, __call = getmetatable(FusedMBConvConfig).__call })
    function FusedMBConvConfig:__init__(expand_ratio, kernel, stride, input_channels, out_channels, num_layers, block)
        if block == nil then
            block = FusedMBConv
        end
        _MBConvConfig.__init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers, block)
    end

    -- isinstance(s, _MBConvConfig)
    local function is_mbconv_config(s)
        local mt = getmetatable(s)
        return mt == _MBConvConfig or mt == MBConvConfig or mt == FusedMBConvConfig
    end

    -- class MBConv(nn.Module):
    MBConv = nn.Module:extend("MBConv")
    nn.signature(MBConv, "self, cnf: MBConvConfig, stochastic_depth_prob: float, norm_layer, " ..
        "se_layer=SqueezeExcitation")
    function MBConv:init(cnf, stochastic_depth_prob, norm_layer, se_layer)
        -- if not (1 <= cnf.stride <= 2):
        if not (1 <= cnf.stride and cnf.stride <= 2) then
            error("illegal stride value")
        end

        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels

        local layers = {}
        local activation_layer = nn.SiLU

        -- expand
        local expanded_channels = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        if expanded_channels ~= cnf.input_channels then
            table.insert(layers,
                Conv2dNormActivation(
                    cnf.input_channels,
                    expanded_channels,
                    {
                        kernel_size = 1,
                        norm_layer = norm_layer,
                        activation_layer = activation_layer,
                    }
                )
            )
        end

        -- depthwise
        table.insert(layers,
            Conv2dNormActivation(
                expanded_channels,
                expanded_channels,
                {
                    kernel_size = cnf.kernel,
                    stride = cnf.stride,
                    groups = expanded_channels,
                    norm_layer = norm_layer,
                    activation_layer = activation_layer,
                }
            )
        )

        -- squeeze and excitation
        -- squeeze_channels = max(1, cnf.input_channels // 4)
        local squeeze_channels = math.max(1, math.floor(cnf.input_channels / 4))
        -- layers.append(se_layer(expanded_channels, squeeze_channels, activation=partial(nn.SiLU, inplace=True)))
        table.insert(layers, se_layer(expanded_channels, squeeze_channels,
            { activation = partial(nn.SiLU, { inplace = true }) }))

        -- project
        table.insert(layers,
            Conv2dNormActivation(
                -- expanded_channels, cnf.out_channels, kernel_size=1, norm_layer=norm_layer, activation_layer=None
                expanded_channels, cnf.out_channels, { kernel_size = 1, norm_layer = norm_layer, activation_layer = false }
            )
        )

        -- self.block = nn.Sequential(*layers)
        self.block = nn.Sequential(unpack(layers))
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels
    end

    function MBConv:forward(input)
        local result = self.block(input)
        if self.use_res_connect then
            result = self.stochastic_depth(result)
            -- result += input
            result = result + input
        end
        return result
    end

    -- class FusedMBConv(nn.Module):
    FusedMBConv = nn.Module:extend("FusedMBConv")
    nn.signature(FusedMBConv, "self, cnf: FusedMBConvConfig, stochastic_depth_prob: float, norm_layer")
    function FusedMBConv:init(cnf, stochastic_depth_prob, norm_layer)
        if not (1 <= cnf.stride and cnf.stride <= 2) then
            error("illegal stride value")
        end

        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels

        local layers = {}
        local activation_layer = nn.SiLU

        local expanded_channels = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        if expanded_channels ~= cnf.input_channels then
            -- fused expand
            table.insert(layers,
                Conv2dNormActivation(
                    cnf.input_channels,
                    expanded_channels,
                    {
                        kernel_size = cnf.kernel,
                        stride = cnf.stride,
                        norm_layer = norm_layer,
                        activation_layer = activation_layer,
                    }
                )
            )

            -- project
            table.insert(layers,
                Conv2dNormActivation(
                    expanded_channels, cnf.out_channels, { kernel_size = 1, norm_layer = norm_layer, activation_layer = false }
                )
            )
        else
            table.insert(layers,
                Conv2dNormActivation(
                    cnf.input_channels,
                    cnf.out_channels,
                    {
                        kernel_size = cnf.kernel,
                        stride = cnf.stride,
                        norm_layer = norm_layer,
                        activation_layer = activation_layer,
                    }
                )
            )
        end

        self.block = nn.Sequential(unpack(layers))
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels
    end

    function FusedMBConv:forward(input)
        local result = self.block(input)
        if self.use_res_connect then
            result = self.stochastic_depth(result)
            result = result + input
        end
        return result
    end

    -- class EfficientNet(nn.Module):
    local EfficientNet = nn.Module:extend("EfficientNet")
    nn.signature(EfficientNet, "self, inverted_residual_setting, dropout: float, stochastic_depth_prob: float = 0.2, " ..
        "num_classes: int = 1000, norm_layer=None, last_channel=None, **kwargs")
    function EfficientNet:init(inverted_residual_setting, dropout, stochastic_depth_prob, num_classes, norm_layer,
                               last_channel, kwargs)
        -- if not inverted_residual_setting:
        if #inverted_residual_setting == 0 then
            error("The inverted_residual_setting should not be empty")
        else
            -- all([isinstance(s, _MBConvConfig) for s in inverted_residual_setting])
            for _, s in ipairs(inverted_residual_setting) do
                if not is_mbconv_config(s) then
                    error("The inverted_residual_setting should be List[MBConvConfig]")
                end
            end
        end

        -- if "block" in kwargs:
        if kwargs and kwargs.block ~= nil then
            -- warnings.warn(...)
            for _, s in ipairs(inverted_residual_setting) do
                if getmetatable(s) == MBConvConfig then
                    s.block = kwargs.block
                end
            end
        end

        if norm_layer == nil then
            norm_layer = nn.BatchNorm2d
        end

        local layers = {}

        -- building first layer
        -- firstconv_output_channels = inverted_residual_setting[0].input_channels
        local firstconv_output_channels = inverted_residual_setting[1].input_channels
        table.insert(layers,
            Conv2dNormActivation(
                3, firstconv_output_channels,
                { kernel_size = 3, stride = 2, norm_layer = norm_layer, activation_layer = nn.SiLU }
            )
        )

        -- building inverted residual blocks
        -- total_stage_blocks = sum(cnf.num_layers for cnf in inverted_residual_setting)
        local total_stage_blocks = 0
        for _, cnf in ipairs(inverted_residual_setting) do total_stage_blocks = total_stage_blocks + cnf.num_layers end
        local stage_block_id = 0
        for _, cnf in ipairs(inverted_residual_setting) do
            local stage = {}
            for _ = 1, cnf.num_layers do
                -- copy to avoid modifications. shallow copy is enough
                local block_cnf = copy.copy(cnf)

                -- overwrite info if not the first conv in the stage
                -- if stage:
                if #stage > 0 then
                    block_cnf.input_channels = block_cnf.out_channels
                    block_cnf.stride = 1
                end

                -- adjust stochastic depth probability based on the depth of the stage block
                -- sd_prob = stochastic_depth_prob * float(stage_block_id) / total_stage_blocks
                local sd_prob = stochastic_depth_prob * stage_block_id / total_stage_blocks

                table.insert(stage, block_cnf.block(block_cnf, sd_prob, norm_layer))
                stage_block_id = stage_block_id + 1
            end

            table.insert(layers, nn.Sequential(unpack(stage)))
        end

        -- building last several layers
        -- lastconv_input_channels = inverted_residual_setting[-1].out_channels
        local lastconv_input_channels = inverted_residual_setting[#inverted_residual_setting].out_channels
        -- last_channel if last_channel is not None else 4 * lastconv_input_channels
        local lastconv_output_channels = last_channel ~= nil and last_channel or 4 * lastconv_input_channels
        table.insert(layers,
            Conv2dNormActivation(
                lastconv_input_channels,
                lastconv_output_channels,
                {
                    kernel_size = 1,
                    norm_layer = norm_layer,
                    activation_layer = nn.SiLU,
                }
            )
        )

        self.features = nn.Sequential(unpack(layers))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            -- nn.Dropout(p=dropout, inplace=True),
            nn.Dropout({ p = dropout, inplace = true }),
            nn.Linear(lastconv_output_channels, num_classes)
        )

        -- for m in self.modules():
        for _, m in ipairs(self:modules()) do
            if isinstance(m, nn.Conv2d) then
                -- nn.init.kaiming_normal_(m.weight, mode="fan_out")
                nn.init.kaiming_normal_(m.weight, { mode = "fan_out" })
                if m.bias ~= nil then
                    nn.init.zeros_(m.bias)
                end
            -- elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            elseif isinstance(m, { nn.BatchNorm2d, nn.GroupNorm }) then
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elseif isinstance(m, nn.Linear) then
                local init_range = 1.0 / math.sqrt(m.out_features)
                nn.init.uniform_(m.weight, -init_range, init_range)
                nn.init.zeros_(m.bias)
            end
        end
    end

    function EfficientNet:_forward_impl(x)
        x = self.features(x)

        x = self.avgpool(x)
        -- x = torch.flatten(x, 1)
        x = tide.flatten(x, 2)

        x = self.classifier(x)

        return x
    end

    function EfficientNet:forward(x)
        return self:_forward_impl(x)
    end

    -- def _efficientnet_conf(arch: str, **kwargs: Any):
    local function _efficientnet_conf(arch, kwargs)
        kwargs = kwargs or {}
        local inverted_residual_setting, last_channel
        -- if arch.startswith("efficientnet_b"):
        if arch:sub(1, #"efficientnet_b") == "efficientnet_b" then
            -- partial(MBConvConfig, width_mult=kwargs.pop("width_mult"), depth_mult=kwargs.pop("depth_mult"))
            local width_mult, depth_mult = kwargs.width_mult, kwargs.depth_mult
            kwargs.width_mult, kwargs.depth_mult = nil, nil
            local function bneck_conf(e, k, s, i, o, n)
                return MBConvConfig(e, k, s, i, o, n, width_mult, depth_mult)
            end
            inverted_residual_setting = {
                bneck_conf(1, 3, 1, 32, 16, 1),
                bneck_conf(6, 3, 2, 16, 24, 2),
                bneck_conf(6, 5, 2, 24, 40, 2),
                bneck_conf(6, 3, 2, 40, 80, 3),
                bneck_conf(6, 5, 1, 80, 112, 3),
                bneck_conf(6, 5, 2, 112, 192, 4),
                bneck_conf(6, 3, 1, 192, 320, 1),
            }
            last_channel = nil
        elseif arch:sub(1, #"efficientnet_v2_s") == "efficientnet_v2_s" then
            inverted_residual_setting = {
                FusedMBConvConfig(1, 3, 1, 24, 24, 2),
                FusedMBConvConfig(4, 3, 2, 24, 48, 4),
                FusedMBConvConfig(4, 3, 2, 48, 64, 4),
                MBConvConfig(4, 3, 2, 64, 128, 6),
                MBConvConfig(6, 3, 1, 128, 160, 9),
                MBConvConfig(6, 3, 2, 160, 256, 15),
            }
            last_channel = 1280
        else
            -- raise ValueError(f"Unsupported model type {arch}")
            error(string.format("Unsupported model type %s", arch))
        end

        return inverted_residual_setting, last_channel
    end

    it("_make_divisible, adjust_channels/adjust_depth and _efficientnet_conf as torchvision computes them", function()
        -- the venv's plain Python on the same definitions
        assert.are.same({ 8, 16, 24, 32, 40, 8, 104 },
            { _make_divisible(3.2, 8), _make_divisible(12.5, 8), _make_divisible(20, 8), _make_divisible(28, 8),
              _make_divisible(36, 8), _make_divisible(1.5, 8), _make_divisible(100, 8) })
        -- efficientnet_b0: width_mult=1.0, depth_mult=1.0; b7: 2.0, 3.1
        local s = _efficientnet_conf("efficientnet_b7", { width_mult = 2.0, depth_mult = 3.1 })
        local got = {}
        for _, c in ipairs(s) do got[#got + 1] = { c.input_channels, c.out_channels, c.num_layers } end
        assert.are.same({ { 64, 32, 4 }, { 32, 48, 7 }, { 48, 80, 7 }, { 80, 160, 10 }, { 160, 224, 10 },
            { 224, 384, 13 }, { 384, 640, 4 } }, got)
        local v2, last = _efficientnet_conf("efficientnet_v2_s")
        assert.are.equal(1280, last)
        assert.are.equal(FusedMBConv, v2[1].block)
        assert.are.equal(MBConv, v2[4].block)
        assert.are.equal(15, v2[6].num_layers)
        assert.has_error(function() _efficientnet_conf("efficientnet_v3") end, "Unsupported model type efficientnet_v3")
        assert.has_error(function() EfficientNet({}, 0.2) end, "The inverted_residual_setting should not be empty")
    end)

    it("EfficientNet b0 at width_mult=0.1, depth_mult=0.1: shapes, sd_prob, the init loop, against PyTorch", function()
        tide.manual_seed(0)
        -- inverted_residual_setting, last_channel = _efficientnet_conf("efficientnet_b0", width_mult=1.0, depth_mult=1.0)
        local inverted_residual_setting, last_channel =
            _efficientnet_conf("efficientnet_b0", { width_mult = 0.1, depth_mult = 0.1 })
        -- model = EfficientNet(inverted_residual_setting, dropout, last_channel=last_channel, **kwargs)
        local model = EfficientNet(inverted_residual_setting, 0.2, { last_channel = last_channel, num_classes = 5 })
        -- 1 stem + 7 stages + 1 head
        assert.are.equal(9, #model.features)
        -- the first MBConv has expand_ratio 1: no expand conv, depthwise, SE, project
        assert.are.equal(3, #model.features[2][1].block)
        assert.are.equal("SqueezeExcitation", model.features[2][1].block[2].__class__.__name__)
        assert.are.equal(4, #model.features[3][1].block)
        -- sd_prob = 0.2 * stage_block_id / 7
        assert.is_true(math.abs(model.features[8][1].stochastic_depth.p - 0.2 * 6 / 7) < 1e-12)
        assert.are.equal(0, model.classifier[2].bias:abs():sum():item())
        assert.is_true(model.classifier[2].weight:abs():max():item() <= 1 / math.sqrt(5))
        local y = model(tide.randn(2, 3, 32, 32))
        assert.are.same({ 2, 5 }, { y:size(1), y:size(2) })
        check_forward(model, EFFNET_B0_WANT, 32, 5)
        train_steps(model, 5, 32)
    end)

    it("EfficientNet v2 (FusedMBConv + MBConv stages, last_channel) at a tiny setting, against PyTorch", function()
        tide.manual_seed(0)
        -- efficientnet_v2_s's first stages with 8/16/24 channels and 1-2 layers
        local inverted_residual_setting = {
            FusedMBConvConfig(1, 3, 1, 8, 8, 2),
            FusedMBConvConfig(4, 3, 2, 8, 16, 1),
            MBConvConfig(4, 3, 2, 16, 24, 2),
        }
        local model = EfficientNet(inverted_residual_setting, 0.2, { last_channel = 32, num_classes = 5,
            stochastic_depth_prob = 0.1 })
        -- FusedMBConv with expand_ratio 1: one Conv2dNormActivation, residual on the second block
        assert.are.equal(1, #model.features[2][1].block)
        assert.is_true(model.features[2][2].use_res_connect)
        assert.are.equal(2, #model.features[3][1].block)
        assert.are.equal(32, model.classifier[2].in_features)
        check_forward(model, EFFNET_V2_WANT, 32, 5)
        train_steps(model, 5, 32)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. torchvision/models/mnasnet.py
---------------------------------------------------------------------------------------------
describe("torchvision/models/mnasnet.py", function()
    -- Paper suggests 0.9997 momentum, for TensorFlow. Equivalent PyTorch momentum is
    -- 1.0 - tensorflow.
    local _BN_MOMENTUM = 1 - 0.9997

    -- class _InvertedResidual(nn.Module):
    local _InvertedResidual = nn.Module:extend("_InvertedResidual")
    nn.signature(_InvertedResidual, "self, in_ch, out_ch, kernel_size, stride, expansion_factor, bn_momentum=0.1")
    function _InvertedResidual:init(in_ch, out_ch, kernel_size, stride, expansion_factor, bn_momentum)
        -- assert stride in [1, 2]
        assert(stride == 1 or stride == 2)
        -- assert kernel_size in [3, 5]
        assert(kernel_size == 3 or kernel_size == 5)
        local mid_ch = in_ch * expansion_factor
        self.apply_residual = (in_ch == out_ch and stride == 1)
        self.layers = nn.Sequential(
            -- Pointwise
            -- nn.Conv2d(in_ch, mid_ch, 1, bias=False),
            nn.Conv2d(in_ch, mid_ch, 1, { bias = false }),
            -- nn.BatchNorm2d(mid_ch, momentum=bn_momentum),
            nn.BatchNorm2d(mid_ch, { momentum = bn_momentum }),
            -- nn.ReLU(inplace=True),
            nn.ReLU({ inplace = true }),
            -- Depthwise
            -- nn.Conv2d(mid_ch, mid_ch, kernel_size, padding=kernel_size // 2,
            --           stride=stride, groups=mid_ch, bias=False),
            nn.Conv2d(mid_ch, mid_ch, kernel_size, { padding = math.floor(kernel_size / 2),
                stride = stride, groups = mid_ch, bias = false }),
            nn.BatchNorm2d(mid_ch, { momentum = bn_momentum }),
            nn.ReLU({ inplace = true }),
            -- Linear pointwise. Note that there's no activation.
            nn.Conv2d(mid_ch, out_ch, 1, { bias = false }),
            nn.BatchNorm2d(out_ch, { momentum = bn_momentum }))
    end

    function _InvertedResidual:forward(input)
        if self.apply_residual then
            return self.layers(input) + input
        else
            return self.layers(input)
        end
    end

    -- def _stack(in_ch, out_ch, kernel_size, stride, exp_factor, repeats, bn_momentum):
    local function _stack(in_ch, out_ch, kernel_size, stride, exp_factor, repeats, bn_momentum)
        -- """ Creates a stack of inverted residuals. """
        assert(repeats >= 1)
        -- First one has no skip, because feature map size changes.
        -- first = _InvertedResidual(in_ch, out_ch, kernel_size, stride, exp_factor, bn_momentum=bn_momentum)
        local first = _InvertedResidual(in_ch, out_ch, kernel_size, stride, exp_factor,
            { bn_momentum = bn_momentum })
        local remaining = {}
        -- for _ in range(1, repeats):
        for _ = 1, repeats - 1 do
            table.insert(remaining,
                _InvertedResidual(out_ch, out_ch, kernel_size, 1, exp_factor,
                    { bn_momentum = bn_momentum }))
        end
        -- return nn.Sequential(first, *remaining)
        return nn.Sequential(first, unpack(remaining))
    end

    -- def _round_to_multiple_of(val, divisor, round_up_bias=0.9):
    local function _round_to_multiple_of(val, divisor, round_up_bias)
        round_up_bias = round_up_bias or 0.9
        -- """ Asymmetric rounding to make `val` divisible by `divisor`. ... (83, 8) -> 80, but (84, 8) -> 88. """
        assert(0.0 < round_up_bias and round_up_bias < 1.0)
        -- new_val = max(divisor, int(val + divisor / 2) // divisor * divisor)
        local new_val = math.max(divisor, math.floor(math.floor(val + divisor / 2) / divisor) * divisor)
        -- return new_val if new_val >= round_up_bias * val else new_val + divisor
        return new_val >= round_up_bias * val and new_val or new_val + divisor
    end

    -- def _scale_depths(depths, alpha):
    local function _scale_depths(depths, alpha)
        -- return [_round_to_multiple_of(depth * alpha, 8) for depth in depths]
        local out = {}
        for _, depth in ipairs(depths) do out[#out + 1] = _round_to_multiple_of(depth * alpha, 8) end
        return out
    end

    -- class MNASNet(torch.nn.Module):
    local MNASNet = nn.Module:extend("MNASNet")
    nn.signature(MNASNet, "self, num_classes, alpha, dropout=0.2")
    function MNASNet:init(num_classes, alpha, dropout)
        self.alpha = alpha
        self.num_classes = num_classes
        self.dropout = dropout
        -- depths = _scale_depths([24, 40, 80, 96, 192, 320], alpha)
        local depths = _scale_depths({ 24, 40, 80, 96, 192, 320 }, alpha)
        local layers = {
            -- First layer: regular conv.
            -- nn.Conv2d(3, 32, 3, padding=1, stride=2, bias=False),
            nn.Conv2d(3, 32, 3, { padding = 1, stride = 2, bias = false }),
            nn.BatchNorm2d(32, { momentum = _BN_MOMENTUM }),
            nn.ReLU({ inplace = true }),
            -- Depthwise separable, no skip.
            nn.Conv2d(32, 32, 3, { padding = 1, stride = 1, groups = 32, bias = false }),
            nn.BatchNorm2d(32, { momentum = _BN_MOMENTUM }),
            nn.ReLU({ inplace = true }),
            nn.Conv2d(32, 16, 1, { padding = 0, stride = 1, bias = false }),
            nn.BatchNorm2d(16, { momentum = _BN_MOMENTUM }),
            -- MNASNet blocks: stacks of inverted residuals.
            -- _stack(16, depths[0], 3, 2, 3, 3, _BN_MOMENTUM),
            _stack(16, depths[1], 3, 2, 3, 3, _BN_MOMENTUM),
            _stack(depths[1], depths[2], 5, 2, 3, 3, _BN_MOMENTUM),
            _stack(depths[2], depths[3], 5, 2, 6, 3, _BN_MOMENTUM),
            _stack(depths[3], depths[4], 3, 1, 6, 2, _BN_MOMENTUM),
            _stack(depths[4], depths[5], 5, 2, 6, 4, _BN_MOMENTUM),
            _stack(depths[5], depths[6], 3, 1, 6, 1, _BN_MOMENTUM),
            -- Final mapping to classifier input.
            nn.Conv2d(depths[6], 1280, 1, { padding = 0, stride = 1, bias = false }),
            nn.BatchNorm2d(1280, { momentum = _BN_MOMENTUM }),
            nn.ReLU({ inplace = true }),
        }
        -- self.layers = nn.Sequential(*layers)
        self.layers = nn.Sequential(unpack(layers))
        -- self.classifier = nn.Sequential(nn.Dropout(p=self.dropout, inplace=True), nn.Linear(1280, self.num_classes))
        self.classifier = nn.Sequential(nn.Dropout({ p = self.dropout, inplace = true }),
                                        nn.Linear(1280, self.num_classes))
        self:_initialize_weights()
    end

    function MNASNet:forward(x)
        x = self.layers(x)
        -- Equivalent to global avgpool and removing H and W dimensions.
        -- x = x.mean([2, 3])
        x = x:mean({ 3, 4 })
        return self.classifier(x)
    end

    function MNASNet:_initialize_weights()
        -- for m in self.modules():
        for _, m in ipairs(self:modules()) do
            if isinstance(m, nn.Conv2d) then
                -- n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                local n = m.kernel_size[1] * m.kernel_size[2] * m.out_channels
                -- m.weight.data.normal_(0, math.sqrt(2.0 / n))
                m.weight.data:normal_(0, math.sqrt(2.0 / n))
                if m.bias ~= nil then
                    m.bias.data:zero_()
                end
            elseif isinstance(m, nn.BatchNorm2d) then
                m.weight.data:fill_(1.0)
                m.bias.data:zero_()
            elseif isinstance(m, nn.Linear) then
                -- n = m.weight.size(1)
                local n = m.weight:size(2) -- luacheck: ignore
                m.weight.data:normal_(0, 0.01)
                m.bias.data:zero_()
            end
        end
    end

    it("_round_to_multiple_of and _scale_depths as torchvision rounds", function()
        -- (83, 8) -> 80, but (84, 8) -> 88
        assert.are.equal(80, _round_to_multiple_of(83, 8))
        assert.are.equal(88, _round_to_multiple_of(84, 8))
        -- the venv's plain Python on the same definitions
        assert.are.same({ 8, 16, 24, 24, 48, 80 }, _scale_depths({ 24, 40, 80, 96, 192, 320 }, 0.25))
        assert.are.same({ 32, 56, 104, 128, 248, 416 }, _scale_depths({ 24, 40, 80, 96, 192, 320 }, 1.3))
    end)

    it("MNASNet(num_classes, alpha=0.25): shapes, residuals, the init, against PyTorch, then steps", function()
        tide.manual_seed(0)
        -- model = MNASNet(1000, 1.0)   (mnasnet0_5: MNASNet(num_classes, alpha=0.5))
        local model = MNASNet(5, { alpha = 0.25 })
        -- 8 stem layers + 6 stacks + 3 head layers
        assert.are.equal(17, #model.layers)
        assert.are.equal(3, #model.layers[9])
        assert.is_false(model.layers[9][1].apply_residual)
        assert.is_true(model.layers[9][2].apply_residual)
        assert.is_true(math.abs(model.layers[2].momentum - 0.0003) < 1e-12)
        assert.are.equal(_BN_MOMENTUM, model.layers[9][1].layers[2].momentum)
        -- the Linear: normal_(0, 0.01), bias zero
        assert.is_true(model.classifier[2].weight:std():item() < 0.02)
        assert.are.equal(0, model.classifier[2].bias:abs():sum():item())
        local y = model(tide.randn(2, 3, 32, 32))
        assert.are.same({ 2, 5 }, { y:size(1), y:size(2) })
        check_forward(model, MNASNET_WANT, 32, 5)
        -- steps from torchvision's init: the fill's loss (logits of 77, BN over 4 samples) follows
        -- its gradient only for steps below 1e-7, so AdamW's 1e-3 steps moved it by rounding
        tide.manual_seed(0)
        train_steps(MNASNet(5, { alpha = 0.25 }), 5, 32)
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. torchvision/models/regnet.py
---------------------------------------------------------------------------------------------
describe("torchvision/models/regnet.py", function()
    -- class SimpleStemIN(Conv2dNormActivation):
    local SimpleStemIN = Conv2dNormActivation:extend("SimpleStemIN")
    nn.signature(SimpleStemIN, "self, width_in: int, width_out: int, norm_layer, activation_layer")
    function SimpleStemIN:init(width_in, width_out, norm_layer, activation_layer)
        -- super().__init__(width_in, width_out, kernel_size=3, stride=2, norm_layer=norm_layer, activation_layer=activation_layer)
        Conv2dNormActivation.init(self,
            width_in, width_out, { kernel_size = 3, stride = 2, norm_layer = norm_layer, activation_layer = activation_layer }
        )
    end

    -- class BottleneckTransform(nn.Sequential):
    local BottleneckTransform = nn.Sequential:extend("BottleneckTransform")
    nn.signature(BottleneckTransform, "self, width_in: int, width_out: int, stride: int, norm_layer, " ..
        "activation_layer, group_width: int, bottleneck_multiplier: float, se_ratio")
    function BottleneckTransform:init(width_in, width_out, stride, norm_layer, activation_layer, group_width,
                                      bottleneck_multiplier, se_ratio)
        -- layers: OrderedDict[str, nn.Module] = OrderedDict()
        local layers = {}
        -- w_b = int(round(width_out * bottleneck_multiplier))
        local w_b = math.floor(width_out * bottleneck_multiplier + 0.5)
        -- g = w_b // group_width
        local g = math.floor(w_b / group_width)

        -- layers["a"] = Conv2dNormActivation(width_in, w_b, kernel_size=1, stride=1, norm_layer=norm_layer, activation_layer=activation_layer)
        table.insert(layers, { "a", Conv2dNormActivation(
            width_in, w_b, { kernel_size = 1, stride = 1, norm_layer = norm_layer, activation_layer = activation_layer }
        ) })
        table.insert(layers, { "b", Conv2dNormActivation(
            w_b, w_b, { kernel_size = 3, stride = stride, groups = g, norm_layer = norm_layer,
                activation_layer = activation_layer }
        ) })

        if se_ratio then
            -- The SE reduction ratio is defined with respect to the
            -- beginning of the block
            -- width_se_out = int(round(se_ratio * width_in))
            local width_se_out = math.floor(se_ratio * width_in + 0.5)
            table.insert(layers, { "se", SqueezeExcitation({
                input_channels = w_b,
                squeeze_channels = width_se_out,
                activation = activation_layer,
            }) })
        end

        table.insert(layers, { "c", Conv2dNormActivation(
            w_b, width_out, { kernel_size = 1, stride = 1, norm_layer = norm_layer, activation_layer = false }
        ) })
        -- super().__init__(layers)
        nn.Sequential.init(self, layers)
    end

    -- class ResBottleneckBlock(nn.Module):
    local ResBottleneckBlock = nn.Module:extend("ResBottleneckBlock")
    nn.signature(ResBottleneckBlock, "self, width_in: int, width_out: int, stride: int, norm_layer, " ..
        "activation_layer, group_width: int = 1, bottleneck_multiplier: float = 1.0, se_ratio=None")
    function ResBottleneckBlock:init(width_in, width_out, stride, norm_layer, activation_layer, group_width,
                                     bottleneck_multiplier, se_ratio)
        -- Use skip connection with projection if shape changes
        self.proj = nil
        local should_proj = (width_in ~= width_out) or (stride ~= 1)
        if should_proj then
            self.proj = Conv2dNormActivation(
                width_in, width_out, { kernel_size = 1, stride = stride, norm_layer = norm_layer, activation_layer = false }
            )
        end
        self.f = BottleneckTransform(
            width_in,
            width_out,
            stride,
            norm_layer,
            activation_layer,
            group_width,
            bottleneck_multiplier,
            se_ratio
        )
        -- self.activation = activation_layer(inplace=True)
        self.activation = activation_layer({ inplace = true })
    end

    function ResBottleneckBlock:forward(x)
        if self.proj ~= nil then
            x = self.proj(x) + self.f(x)
        else
            x = x + self.f(x)
        end
        return self.activation(x)
    end

    -- class AnyStage(nn.Sequential):
    local AnyStage = nn.Sequential:extend("AnyStage")
    nn.signature(AnyStage, "self, width_in: int, width_out: int, stride: int, depth: int, block_constructor, " ..
        "norm_layer, activation_layer, group_width: int, bottleneck_multiplier: float, se_ratio=None, " ..
        "stage_index: int = 0")
    function AnyStage:init(width_in, width_out, stride, depth, block_constructor, norm_layer, activation_layer,
                           group_width, bottleneck_multiplier, se_ratio, stage_index)
        -- super().__init__()
        nn.Sequential.init(self)

        -- for i in range(depth):
        for i = 0, depth - 1 do
            local block = block_constructor(
                -- width_in if i == 0 else width_out,
                i == 0 and width_in or width_out,
                width_out,
                i == 0 and stride or 1,
                norm_layer,
                activation_layer,
                group_width,
                bottleneck_multiplier,
                se_ratio
            )

            -- self.add_module(f"block{stage_index}-{i}", block)
            self:add_module(string.format("block%d-%d", stage_index, i), block)
        end
    end

    -- class BlockParams:
    local BlockParams = ported.class("BlockParams")
    function BlockParams:__init__(depths, widths, group_widths, bottleneck_multipliers, strides, se_ratio)
        self.depths = depths
        self.widths = widths
        self.group_widths = group_widths
        self.bottleneck_multipliers = bottleneck_multipliers
        self.strides = strides
        self.se_ratio = se_ratio
    end

    -- @classmethod def from_init_params(cls, depth, w_0, w_a, w_m, group_width, bottleneck_multiplier=1.0, se_ratio=None, **kwargs)
    function BlockParams.from_init_params(cls, depth, w_0, w_a, w_m, group_width, bottleneck_multiplier, se_ratio)
        bottleneck_multiplier = bottleneck_multiplier or 1.0
        local QUANT = 8
        local STRIDE = 2

        -- if w_a < 0 or w_0 <= 0 or w_m <= 1 or w_0 % 8 != 0:
        if w_a < 0 or w_0 <= 0 or w_m <= 1 or w_0 % 8 ~= 0 then
            error("Invalid RegNet settings")
        end
        -- Compute the block widths. Each stage has one unique block width
        -- widths_cont = torch.arange(depth) * w_a + w_0
        local widths_cont = tide.arange(depth) * w_a + w_0
        -- block_capacity = torch.round(torch.log(widths_cont / w_0) / math.log(w_m))
        local block_capacity = tide.round(tide.log(widths_cont / w_0) / math.log(w_m))
        -- block_widths = (torch.round(torch.divide(w_0 * torch.pow(w_m, block_capacity), QUANT)) * QUANT).int().tolist()
        local block_widths = (tide.round(tide.divide(w_0 * tide.pow(w_m, block_capacity), QUANT)) * QUANT):int():tolist()
        -- num_stages = len(set(block_widths))
        local set = {}
        local num_stages = 0
        for _, w in ipairs(block_widths) do
            if not set[w] then set[w] = true; num_stages = num_stages + 1 end
        end

        -- Convert to per stage parameters
        -- split_helper = zip(block_widths + [0], [0] + block_widths, block_widths + [0], [0] + block_widths)
        -- splits = [w != wp or r != rp for w, wp, r, rp in split_helper]
        local splits = {}
        for j = 1, #block_widths + 1 do
            local w, wp = block_widths[j] or 0, block_widths[j - 1] or 0
            local r, rp = w, wp
            splits[j] = w ~= wp or r ~= rp
        end

        -- stage_widths = [w for w, t in zip(block_widths, splits[:-1]) if t]
        local stage_widths = {}
        for j, w in ipairs(block_widths) do
            if splits[j] then stage_widths[#stage_widths + 1] = w end
        end
        -- stage_depths = torch.diff(torch.tensor([d for d, t in enumerate(splits) if t])).int().tolist()
        local ds = {}
        for d, t in ipairs(splits) do
            if t then ds[#ds + 1] = d - 1 end
        end
        local stage_depths = tide.diff(tide.tensor(ds)):int():tolist()

        -- strides = [STRIDE] * num_stages
        local strides, bottleneck_multipliers, group_widths = {}, {}, {}
        for j = 1, num_stages do
            strides[j] = STRIDE
            bottleneck_multipliers[j] = bottleneck_multiplier
            group_widths[j] = group_width
        end

        -- Adjust the compatibility of stage widths and group widths
        stage_widths, group_widths = cls._adjust_widths_groups_compatibilty(
            stage_widths, bottleneck_multipliers, group_widths
        )

        -- return cls(depths=stage_depths, widths=stage_widths, ...)
        return cls(stage_depths, stage_widths, group_widths, bottleneck_multipliers, strides, se_ratio)
    end

    -- def _get_expanded_params(self):
    function BlockParams:_get_expanded_params()
        -- return zip(self.widths, self.strides, self.depths, self.group_widths, self.bottleneck_multipliers)
        local out = {}
        for j = 1, #self.widths do
            out[j] = { self.widths[j], self.strides[j], self.depths[j], self.group_widths[j],
                self.bottleneck_multipliers[j] }
        end
        return out
    end

    -- @staticmethod def _adjust_widths_groups_compatibilty(stage_widths, bottleneck_ratios, group_widths):
    function BlockParams._adjust_widths_groups_compatibilty(stage_widths, bottleneck_ratios, group_widths)
        -- Compute all widths for the current settings
        -- widths = [int(w * b) for w, b in zip(stage_widths, bottleneck_ratios)]
        -- group_widths_min = [min(g, w_bot) for g, w_bot in zip(group_widths, widths)]
        local widths, group_widths_min = {}, {}
        for j = 1, #stage_widths do
            widths[j] = math.floor(stage_widths[j] * bottleneck_ratios[j])
            group_widths_min[j] = math.min(group_widths[j], widths[j])
        end

        -- Compute the adjusted widths so that stage and group widths fit
        -- ws_bot = [_make_divisible(w_bot, g) for w_bot, g in zip(widths, group_widths_min)]
        -- stage_widths = [int(w_bot / b) for w_bot, b in zip(ws_bot, bottleneck_ratios)]
        local new_widths = {}
        for j = 1, #widths do
            local w_bot = _make_divisible(widths[j], group_widths_min[j])
            new_widths[j] = math.floor(w_bot / bottleneck_ratios[j])
        end
        return new_widths, group_widths_min
    end

    -- class RegNet(nn.Module):
    local RegNet = nn.Module:extend("RegNet")
    nn.signature(RegNet, "self, block_params, num_classes: int = 1000, stem_width: int = 32, stem_type=None, " ..
        "block_type=None, norm_layer=None, activation=None")
    function RegNet:init(block_params, num_classes, stem_width, stem_type, block_type, norm_layer, activation)
        if stem_type == nil then
            stem_type = SimpleStemIN
        end
        if norm_layer == nil then
            norm_layer = nn.BatchNorm2d
        end
        if block_type == nil then
            block_type = ResBottleneckBlock
        end
        if activation == nil then
            activation = nn.ReLU
        end

        -- Ad hoc stem
        self.stem = stem_type(
            3, -- width_in
            stem_width,
            norm_layer,
            activation
        )

        local current_width = stem_width

        local blocks = {}
        -- for i, (width_out, stride, depth, group_width, bottleneck_multiplier) in enumerate(block_params._get_expanded_params()):
        for i, params in ipairs(block_params:_get_expanded_params()) do
            local width_out, stride, depth, group_width, bottleneck_multiplier = unpack(params)
            table.insert(blocks,
                {
                    -- f"block{i+1}",
                    string.format("block%d", i),
                    AnyStage(
                        current_width,
                        width_out,
                        stride,
                        depth,
                        block_type,
                        norm_layer,
                        activation,
                        group_width,
                        bottleneck_multiplier,
                        block_params.se_ratio,
                        -- stage_index=i + 1,
                        { stage_index = i }
                    ),
                }
            )

            current_width = width_out
        end

        -- self.trunk_output = nn.Sequential(OrderedDict(blocks))
        self.trunk_output = nn.Sequential(blocks)

        -- self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.avgpool = nn.AdaptiveAvgPool2d({ 1, 1 })
        -- self.fc = nn.Linear(in_features=current_width, out_features=num_classes)
        self.fc = nn.Linear({ in_features = current_width, out_features = num_classes })

        -- Performs ResNet-style weight initialization
        for _, m in ipairs(self:modules()) do
            if isinstance(m, nn.Conv2d) then
                -- Note that there is no bias due to BN
                -- fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                local fan_out = m.kernel_size[1] * m.kernel_size[2] * m.out_channels
                -- nn.init.normal_(m.weight, mean=0.0, std=math.sqrt(2.0 / fan_out))
                nn.init.normal_(m.weight, { mean = 0.0, std = math.sqrt(2.0 / fan_out) })
            elseif isinstance(m, nn.BatchNorm2d) then
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elseif isinstance(m, nn.Linear) then
                nn.init.normal_(m.weight, { mean = 0.0, std = 0.01 })
                nn.init.zeros_(m.bias)
            end
        end
    end

    function RegNet:forward(x)
        x = self.stem(x)
        x = self.trunk_output(x)

        x = self.avgpool(x)
        -- x = x.flatten(start_dim=1)
        x = x:flatten({ start_dim = 2 })
        x = self.fc(x)

        return x
    end

    it("BlockParams.from_init_params: the torch math of regnet_y_400mf, regnet_x_1_6gf and a tiny one", function()
        -- regnet_y_400mf: BlockParams.from_init_params(depth=16, w_0=48, w_a=27.89, w_m=2.09, group_width=8, se_ratio=0.25)
        local p = BlockParams:from_init_params(16, 48, 27.89, 2.09, 8, nil, 0.25)
        assert.are.same(REGNET_Y_400MF, { p.depths, p.widths, p.group_widths })
        -- regnet_x_1_6gf: depth=18, w_0=80, w_a=34.01, w_m=2.25, group_width=24
        p = BlockParams:from_init_params(18, 80, 34.01, 2.25, 24)
        assert.are.same(REGNET_X_1_6GF, { p.depths, p.widths, p.group_widths })
        p = BlockParams:from_init_params(4, 8, 8.0, 2.0, 8, nil, 0.25)
        assert.are.same({ { 1, 1, 2 }, { 8, 16, 32 }, { 8, 8, 8 } }, { p.depths, p.widths, p.group_widths })
        assert.has_error(function() BlockParams:from_init_params(4, 12, 8.0, 2.0, 8) end, "Invalid RegNet settings")
    end)

    it("RegNet (Y: SE, groups) at depth=4, w_0=8: names, shapes, the init, against PyTorch, then steps", function()
        tide.manual_seed(0)
        local block_params = BlockParams:from_init_params(4, 8, 8.0, 2.0, 8, nil, 0.25)
        -- norm_layer = kwargs.pop("norm_layer", partial(nn.BatchNorm2d, eps=1e-05, momentum=0.1))
        local norm_layer = partial(nn.BatchNorm2d, { eps = 1e-05, momentum = 0.1 })
        -- model = RegNet(block_params, norm_layer=norm_layer, **kwargs)
        local model = RegNet(block_params, { norm_layer = norm_layer, num_classes = 5, stem_width = 8 })
        assert.is_true(model.trunk_output.block3["block3-1"].f.se ~= nil)
        assert.is_nil(model.trunk_output.block3["block3-1"].proj)
        assert.is_true(model.trunk_output.block1["block1-0"].proj ~= nil)
        local sd = model:state_dict()
        assert.is_true(sd["trunk_output.block2.block2-0.f.b.1.weight"] ~= nil)
        assert.are.equal(0, model.fc.bias:abs():sum():item())
        local y = model(tide.randn(2, 3, 32, 32))
        assert.are.same({ 2, 5 }, { y:size(1), y:size(2) })
        check_forward(model, REGNET_WANT, 32, 5)
        train_steps(model, 5, 32)
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. torchvision/models/mobilenetv3.py (the stored torchvision 0.9 version: its own SqueezeExcitation,
-- mobilenetv2's ConvBNActivation, which is Conv2dNormActivation's signature)
---------------------------------------------------------------------------------------------
describe("torchvision/models/mobilenetv3.py", function()
    local ConvBNActivation = Conv2dNormActivation

    -- class SqueezeExcitation(nn.Module):
    local SqueezeExcitationV3 = nn.Module:extend("SqueezeExcitationV3")
    nn.signature(SqueezeExcitationV3, "self, input_channels: int, squeeze_factor: int = 4")
    function SqueezeExcitationV3:init(input_channels, squeeze_factor)
        -- squeeze_channels = _make_divisible(input_channels // squeeze_factor, 8)
        local squeeze_channels = _make_divisible(math.floor(input_channels / squeeze_factor), 8)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.relu = nn.ReLU({ inplace = true })
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
    end
    function SqueezeExcitationV3:_scale(input, inplace)
        local scale = F.adaptive_avg_pool2d(input, 1)
        scale = self.fc1(scale)
        scale = self.relu(scale)
        scale = self.fc2(scale)
        -- return F.hardsigmoid(scale, inplace=inplace)
        return F.hardsigmoid(scale, { inplace = inplace })
    end
    function SqueezeExcitationV3:forward(input)
        local scale = self:_scale(input, true)
        return scale * input
    end

    -- class InvertedResidualConfig:
    local InvertedResidualConfig = ported.class("InvertedResidualConfig")
    function InvertedResidualConfig:__init__(input_channels, kernel, expanded_channels, out_channels, use_se,
                                             activation, stride, dilation, width_mult)
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.use_se = use_se
        self.use_hs = activation == "HS"
        self.stride = stride
        self.dilation = dilation
    end
    -- @staticmethod def adjust_channels(channels: int, width_mult: float):
    function InvertedResidualConfig.adjust_channels(channels, width_mult)
        return _make_divisible(channels * width_mult, 8)
    end

    -- class InvertedResidual(nn.Module):
    local InvertedResidual = nn.Module:extend("InvertedResidual")
    nn.signature(InvertedResidual, "self, cnf, norm_layer, se_layer=SqueezeExcitationV3")
    function InvertedResidual:init(cnf, norm_layer, se_layer)
        if not (1 <= cnf.stride and cnf.stride <= 2) then
            error("illegal stride value")
        end

        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels

        local layers = {}
        -- activation_layer = nn.Hardswish if cnf.use_hs else nn.ReLU
        local activation_layer = cnf.use_hs and nn.Hardswish or nn.ReLU

        -- expand
        if cnf.expanded_channels ~= cnf.input_channels then
            table.insert(layers, ConvBNActivation(cnf.input_channels, cnf.expanded_channels, { kernel_size = 1,
                norm_layer = norm_layer, activation_layer = activation_layer }))
        end

        -- depthwise
        -- stride = 1 if cnf.dilation > 1 else cnf.stride
        local stride = cnf.dilation > 1 and 1 or cnf.stride
        table.insert(layers, ConvBNActivation(cnf.expanded_channels, cnf.expanded_channels, { kernel_size = cnf.kernel,
            stride = stride, dilation = cnf.dilation, groups = cnf.expanded_channels,
            norm_layer = norm_layer, activation_layer = activation_layer }))
        if cnf.use_se then
            table.insert(layers, se_layer(cnf.expanded_channels))
        end

        -- project
        table.insert(layers, ConvBNActivation(cnf.expanded_channels, cnf.out_channels, { kernel_size = 1,
            norm_layer = norm_layer, activation_layer = nn.Identity }))

        self.block = nn.Sequential(unpack(layers))
        self.out_channels = cnf.out_channels
        self._is_cn = cnf.stride > 1
    end

    function InvertedResidual:forward(input)
        local result = self.block(input)
        if self.use_res_connect then
            -- result += input
            result = result + input
        end
        return result
    end

    -- class MobileNetV3(nn.Module):
    local MobileNetV3 = nn.Module:extend("MobileNetV3")
    nn.signature(MobileNetV3, "self, inverted_residual_setting, last_channel: int, num_classes: int = 1000, " ..
        "block=None, norm_layer=None")
    function MobileNetV3:init(inverted_residual_setting, last_channel, num_classes, block, norm_layer)
        if #inverted_residual_setting == 0 then
            error("The inverted_residual_setting should not be empty")
        end
        for _, s in ipairs(inverted_residual_setting) do
            if getmetatable(s) ~= InvertedResidualConfig then
                error("The inverted_residual_setting should be List[InvertedResidualConfig]")
            end
        end

        if block == nil then
            block = InvertedResidual
        end

        if norm_layer == nil then
            -- norm_layer = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
            norm_layer = partial(nn.BatchNorm2d, { eps = 0.001, momentum = 0.01 })
        end

        local layers = {}

        -- building first layer
        local firstconv_output_channels = inverted_residual_setting[1].input_channels
        table.insert(layers, ConvBNActivation(3, firstconv_output_channels, { kernel_size = 3, stride = 2,
            norm_layer = norm_layer, activation_layer = nn.Hardswish }))

        -- building inverted residual blocks
        for _, cnf in ipairs(inverted_residual_setting) do
            table.insert(layers, block(cnf, norm_layer))
        end

        -- building last several layers
        local lastconv_input_channels = inverted_residual_setting[#inverted_residual_setting].out_channels
        local lastconv_output_channels = 6 * lastconv_input_channels
        table.insert(layers, ConvBNActivation(lastconv_input_channels, lastconv_output_channels, { kernel_size = 1,
            norm_layer = norm_layer, activation_layer = nn.Hardswish }))

        self.features = nn.Sequential(unpack(layers))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            nn.Linear(lastconv_output_channels, last_channel),
            nn.Hardswish({ inplace = true }),
            nn.Dropout({ p = 0.2, inplace = true }),
            nn.Linear(last_channel, num_classes)
        )

        for _, m in ipairs(self:modules()) do
            if isinstance(m, nn.Conv2d) then
                nn.init.kaiming_normal_(m.weight, { mode = "fan_out" })
                if m.bias ~= nil then
                    nn.init.zeros_(m.bias)
                end
            elseif isinstance(m, { nn.BatchNorm2d, nn.GroupNorm }) then
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elseif isinstance(m, nn.Linear) then
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)
            end
        end
    end

    function MobileNetV3:_forward_impl(x)
        x = self.features(x)

        x = self.avgpool(x)
        x = tide.flatten(x, 2)

        x = self.classifier(x)

        return x
    end

    function MobileNetV3:forward(x)
        return self:_forward_impl(x)
    end

    -- def _mobilenet_v3_conf(arch: str, params: Dict[str, Any]):
    local function _mobilenet_v3_conf(arch, params)
        -- non-public config parameters
        -- reduce_divider = 2 if params.pop('_reduced_tail', False) else 1
        local reduce_divider = params._reduced_tail and 2 or 1
        params._reduced_tail = nil
        local dilation = params._dilated and 2 or 1
        params._dilated = nil
        -- width_mult = params.pop('_width_mult', 1.0)
        local width_mult = params._width_mult or 1.0
        params._width_mult = nil

        -- bneck_conf = partial(InvertedResidualConfig, width_mult=width_mult)
        local function bneck_conf(...)
            local args = { ... }
            args[9] = width_mult
            return InvertedResidualConfig(unpack(args, 1, 9))
        end
        -- adjust_channels = partial(InvertedResidualConfig.adjust_channels, width_mult=width_mult)
        local function adjust_channels(channels)
            return InvertedResidualConfig.adjust_channels(channels, width_mult)
        end
        local function fdiv(a, b) return math.floor(a / b) end

        local inverted_residual_setting, last_channel
        if arch == "mobilenet_v3_small" then
            inverted_residual_setting = {
                bneck_conf(16, 3, 16, 16, true, "RE", 2, 1), -- C1
                bneck_conf(16, 3, 72, 24, false, "RE", 2, 1), -- C2
                bneck_conf(24, 3, 88, 24, false, "RE", 1, 1),
                bneck_conf(24, 5, 96, 40, true, "HS", 2, 1), -- C3
                bneck_conf(40, 5, 240, 40, true, "HS", 1, 1),
                bneck_conf(40, 5, 240, 40, true, "HS", 1, 1),
                bneck_conf(40, 5, 120, 48, true, "HS", 1, 1),
                bneck_conf(48, 5, 144, 48, true, "HS", 1, 1),
                -- bneck_conf(48, 5, 288, 96 // reduce_divider, True, "HS", 2, dilation),  # C4
                bneck_conf(48, 5, 288, fdiv(96, reduce_divider), true, "HS", 2, dilation), -- C4
                bneck_conf(fdiv(96, reduce_divider), 5, fdiv(576, reduce_divider), fdiv(96, reduce_divider), true, "HS", 1,
                    dilation),
                bneck_conf(fdiv(96, reduce_divider), 5, fdiv(576, reduce_divider), fdiv(96, reduce_divider), true, "HS", 1,
                    dilation),
            }
            -- last_channel = adjust_channels(1024 // reduce_divider)  # C5
            last_channel = adjust_channels(fdiv(1024, reduce_divider)) -- C5
        else
            -- raise ValueError("Unsupported model type {}".format(arch))
            error(string.format("Unsupported model type %s", arch))
        end

        return inverted_residual_setting, last_channel
    end

    it("mobilenet_v3_small at _width_mult=0.25 with _reduced_tail: shapes, SE, against PyTorch, then steps", function()
        tide.manual_seed(0)
        local kwargs = { _width_mult = 0.25, _reduced_tail = true, num_classes = 5 }
        local inverted_residual_setting, last_channel = _mobilenet_v3_conf("mobilenet_v3_small", kwargs)
        assert.are.same({ num_classes = 5 }, kwargs)
        assert.are.equal(128, last_channel)
        assert.are.same({ 8, 8, 8 }, { inverted_residual_setting[1].input_channels,
            inverted_residual_setting[1].out_channels, inverted_residual_setting[1].expanded_channels })
        -- model = MobileNetV3(inverted_residual_setting, last_channel, **kwargs)
        local model = MobileNetV3(inverted_residual_setting, last_channel, kwargs)
        assert.are.equal(13, #model.features)
        assert.are.equal("SqueezeExcitationV3", model.features[2].block[2].__class__.__name__)
        assert.are.equal("Hardswish", model.features[5].block[1][3].__class__.__name__)
        assert.are.equal(0.01, model.features[1][2].momentum)
        local y = model(tide.randn(2, 3, 32, 32))
        assert.are.same({ 2, 5 }, { y:size(1), y:size(2) })
        check_forward(model, MOBILENETV3_WANT, 32, 5)
        train_steps(model, 5, 32)
    end)
end)

---------------------------------------------------------------------------------------------
-- gaps met porting torchvision's efficientnet, mnasnet and regnet
---------------------------------------------------------------------------------------------
describe("gaps met porting torchvision's efficientnet, mnasnet and regnet", function()
    it("nn.signature takes torch.nn.X as a class default (ops/misc.py's activation=torch.nn.ReLU)", function()
        -- SqueezeExcitation(input_channels, squeeze_channels, activation=torch.nn.ReLU, scale_activation=torch.nn.Sigmoid)
        local se = SqueezeExcitation(8, 2)
        assert.are.equal("ReLU", se.activation.__class__.__name__)
        assert.are.equal("Sigmoid", se.scale_activation.__class__.__name__)
        local y = se(tide.randn(2, 8, 3, 3))
        assert.are.same({ 2, 8, 3, 3 }, { y:size(1), y:size(2), y:size(3), y:size(4) })
        -- an unknown torch.nn name still raises, naming the default and the fix
        local Bad = nn.Module:extend("P47BadDefault")
        assert.has_error(function()
            nn.signature(Bad, "self, act=torch.nn.NoSuchLayer")
        end, "tide: nn.signature: P47BadDefault: the default act=torch.nn.NoSuchLayer is not a Python literal " ..
            "(None, True, False, a number, a string or a tuple of them) nor an nn.Module class (nn.X, or a " ..
            "Module:extend(\"torch.nn.NoSuchLayer\") class defined before nn.signature); define it first, or " ..
            "write act=None and set it in init, as PyTorch's own `if norm_layer is None:` does")
    end)
end)
