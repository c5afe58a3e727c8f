-- ported_scripts46_spec.lua — torchvision's models ported line for line at tiny sizes:
-- models/convnext.py (LayerNorm2d as an nn.LayerNorm subclass, CNBlock with layer_scale and
-- StochasticDepth, CNBlockConfig, ConvNeXt with ops/misc.py's Permute and Conv2dNormActivation,
-- ops/stochastic_depth.py) and models/vision_transformer.py (MLPBlock, EncoderBlock, Encoder with
-- pos_embedding, VisionTransformer with conv_proj, class_token, _process_input and heads). No
-- weights, no pretrained enums: each model is built small, its forward checked against PyTorch 1.13
-- on the same deterministic weights (the classes pasted into plain torch), then trained a few
-- steps on random data. The Python line stands above each Lua line that differs from it.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local isinstance = tide.isinstance
-- the PyTorch 1.13 outputs of the same models on the same fill (the classes pasted into plain torch)
local VIT_WANT = { 1.6007471084594727, -0.3034510612487793, -1.8130712509155273, -0.8581993579864502,
    0.9028337597846985, 1.6026835441589355, -0.30352404713630676, -1.8150372505187988, -0.8589246273040771,
    0.9045054316520691 }
local CONVNEXT_WANT = { -3.2429258823394775, 1.0348761081695557, -0.3280390202999115, -1.833096981048584,
    3.22196364402771, -3.2456531524658203, 1.0368953943252563, -0.32901743054389954, -1.8333203792572021,
    3.2233524322509766 }

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

---------------------------------------------------------------------------------------------
-- 1. torchvision/models/convnext.py
---------------------------------------------------------------------------------------------
describe("torchvision/models/convnext.py", function()
    -- class LayerNorm2d(nn.LayerNorm):
    local LayerNorm2d = nn.LayerNorm:extend("LayerNorm2d")
    function LayerNorm2d:forward(x)
        -- x = x.permute(0, 2, 3, 1)
        x = x:permute(1, 3, 4, 2)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        -- x = x.permute(0, 3, 1, 2)
        x = x:permute(1, 4, 2, 3)
        return x
    end

    -- class CNBlock(nn.Module):
    local CNBlock = nn.Module:extend("CNBlock")
    -- def __init__(self, dim, layer_scale: float, stochastic_depth_prob: float, norm_layer=None)
    nn.signature(CNBlock, "self, dim, layer_scale: float, stochastic_depth_prob: float, norm_layer=None")
    function CNBlock:init(dim, layer_scale, stochastic_depth_prob, norm_layer)
        if norm_layer == nil then
            -- norm_layer = partial(nn.LayerNorm, eps=1e-6)
            norm_layer = partial(nn.LayerNorm, { eps = 1e-6 })
        end

        self.block = nn.Sequential(
            -- nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True),
            nn.Conv2d(dim, dim, { kernel_size = 7, padding = 3, groups = dim, bias = true }),
            -- Permute([0, 2, 3, 1]),
            Permute({ 1, 3, 4, 2 }),
            norm_layer(dim),
            -- nn.Linear(in_features=dim, out_features=4 * dim, bias=True),
            nn.Linear({ in_features = dim, out_features = 4 * dim, bias = true }),
            nn.GELU(),
            nn.Linear({ in_features = 4 * dim, out_features = dim, bias = true }),
            -- Permute([0, 3, 1, 2]),
            Permute({ 1, 4, 2, 3 })
        )
        -- self.layer_scale = nn.Parameter(torch.ones(dim, 1, 1) * layer_scale)
        self.layer_scale = nn.Parameter(tide.ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
    end

    function CNBlock:forward(input)
        local result = self.layer_scale * self.block(input)
        result = self.stochastic_depth(result)
        -- result += input
        result = result + input
        return result
    end

    -- class CNBlockConfig:
    local CNBlockConfig = ported.class("CNBlockConfig")
    function CNBlockConfig:__init__(input_channels, out_channels, num_layers)
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers
    end

    -- class ConvNeXt(nn.Module):
    local ConvNeXt = nn.Module:extend("ConvNeXt")
    nn.signature(ConvNeXt, "self, block_setting, stochastic_depth_prob: float = 0.0, layer_scale: float = 1e-6, " ..
        "num_classes: int = 1000, block=None, norm_layer=None, **kwargs")
    function ConvNeXt:init(block_setting, stochastic_depth_prob, layer_scale, num_classes, block, norm_layer)
        -- if not block_setting:
        if #block_setting == 0 then
            error("The block_setting should not be empty")
        end

        if block == nil then
            block = CNBlock
        end

        if norm_layer == nil then
            -- norm_layer = partial(LayerNorm2d, eps=1e-6)
            norm_layer = partial(LayerNorm2d, { eps = 1e-6 })
        end

        local layers = {}

        -- Stem
        -- firstconv_output_channels = block_setting[0].input_channels
        local firstconv_output_channels = block_setting[1].input_channels
        table.insert(layers,
            Conv2dNormActivation(
                3,
                firstconv_output_channels,
                {
                    kernel_size = 4,
                    stride = 4,
                    padding = 0,
                    norm_layer = norm_layer,
                    -- activation_layer=None,  (Lua: false, nil would be the default nn.ReLU)
                    activation_layer = false,
                    bias = true,
                }
            )
        )

        -- total_stage_blocks = sum(cnf.num_layers for cnf in block_setting)
        local total_stage_blocks = 0
        for _, cnf in ipairs(block_setting) do total_stage_blocks = total_stage_blocks + cnf.num_layers end
        local stage_block_id = 0
        for _, cnf in ipairs(block_setting) do
            -- Bottlenecks
            local stage = {}
            for _ = 1, cnf.num_layers do
                -- adjust stochastic depth probability based on the depth of the stage block
                local sd_prob = stochastic_depth_prob * stage_block_id / (total_stage_blocks - 1.0)
                table.insert(stage, block(cnf.input_channels, layer_scale, sd_prob))
                stage_block_id = stage_block_id + 1
            end
            -- layers.append(nn.Sequential(*stage))
            table.insert(layers, nn.Sequential(unpack(stage)))
            if cnf.out_channels ~= nil then
                -- Downsampling
                table.insert(layers,
                    nn.Sequential(
                        norm_layer(cnf.input_channels),
                        -- nn.Conv2d(cnf.input_channels, cnf.out_channels, kernel_size=2, stride=2),
                        nn.Conv2d(cnf.input_channels, cnf.out_channels, { kernel_size = 2, stride = 2 })
                    )
                )
            end
        end

        -- self.features = nn.Sequential(*layers)
        self.features = nn.Sequential(unpack(layers))
        self.avgpool = nn.AdaptiveAvgPool2d(1)

        -- lastblock = block_setting[-1]
        local lastblock = block_setting[#block_setting]
        -- lastblock.out_channels if lastblock.out_channels is not None else lastblock.input_channels
        local lastconv_output_channels = lastblock.out_channels ~= nil and lastblock.out_channels
            or lastblock.input_channels
        -- norm_layer(lastconv_output_channels), nn.Flatten(1), nn.Linear(lastconv_output_channels, num_classes)
        self.classifier = nn.Sequential(
            norm_layer(lastconv_output_channels), nn.Flatten(2), nn.Linear(lastconv_output_channels, num_classes)
        )

        for _, m in ipairs(self:modules()) do
            -- if isinstance(m, (nn.Conv2d, nn.Linear)):
            if isinstance(m, { nn.Conv2d, nn.Linear }) then
                -- nn.init.trunc_normal_(m.weight, std=0.02)
                nn.init.trunc_normal_(m.weight, { std = 0.02 })
                if m.bias ~= nil then
                    nn.init.zeros_(m.bias)
                end
            end
        end
    end

    function ConvNeXt:_forward_impl(x)
        x = self.features(x)
        x = self.avgpool(x)
        x = self.classifier(x)
        return x
    end

    function ConvNeXt:forward(x)
        return self:_forward_impl(x)
    end

    -- convnext_tiny's CNBlockConfig(96, 192, 3), (192, 384, 3), (384, 768, 9), (768, None, 3),
    -- here 8/16/32 wide, 1/1/2 deep
    local function tiny_setting()
        return {
            CNBlockConfig(8, 16, 1),
            CNBlockConfig(16, 32, 1),
            CNBlockConfig(32, nil, 2),
        }
    end

    it("ConvNeXt: shapes, the stem without activation, sd_prob per block, the init loop", function()
        tide.manual_seed(0)
        -- model = ConvNeXt(block_setting, stochastic_depth_prob=stochastic_depth_prob, **kwargs)
        local model = ConvNeXt(tiny_setting(), { stochastic_depth_prob = 0.1, num_classes = 5 })
        -- the stem: Conv2d + LayerNorm2d, no activation
        assert.are.equal(2, #model.features[1])
        assert.are.equal("LayerNorm2d", model.features[1][2].__class__.__name__)
        assert.is_true(model.features[1][1].bias ~= nil)
        -- sd_prob = 0.1 * stage_block_id / (4 - 1)
        assert.are.equal(0, model.features[2][1].stochastic_depth.p)
        assert.is_true(math.abs(model.features[6][2].stochastic_depth.p - 0.1) < 1e-12)
        assert.are.same({ 8 }, model.features[3][1].normalized_shape)
        -- nn.init.zeros_(m.bias)
        assert.are.equal(0, model.classifier[3].bias:abs():sum():item())
        -- (a=-2, b=2 are absolute bounds, as in PyTorch: std 0.02 draws, none past 2)
        assert.is_true(model.classifier[3].weight:std():item() < 0.05)
        local y = model(tide.randn(2, 3, 32, 32))
        assert.are.same({ 2, 5 }, { y:size(1), y:size(2) })
        -- StochasticDepth(p, "row") drops whole samples in training
        local sd = StochasticDepth(0.5, "row")
        local x = tide.ones(8, 2, 3, 3)
        local out = sd(x)
        for i = 1, 8 do
            local s = out[i]:sum():item()
            assert.is_true(s == 0 or math.abs(s - 36) < 1e-5)
        end
        sd:eval()
        assert.are.equal(x, sd(x))
    end)

    it("ConvNeXt: forward against PyTorch, then AdamW steps", function()
        local model = ConvNeXt(tiny_setting(), { num_classes = 5, layer_scale = 0.5 })
        check_forward(model, CONVNEXT_WANT, 32, 5)
        train_steps(model, 5, 32)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. torchvision/models/vision_transformer.py (and ops/misc.py's MLP)
---------------------------------------------------------------------------------------------
describe("torchvision/models/vision_transformer.py", function()
    -- class MLP(torch.nn.Sequential):
    local MLP = nn.Sequential:extend("MLP")
    -- def __init__(self, in_channels, hidden_channels, norm_layer=None, activation_layer=torch.nn.ReLU,
    --     inplace=None, bias=True, dropout=0.0):
    nn.signature(MLP, "self, in_channels: int, hidden_channels: List[int], norm_layer=None, " ..
        "activation_layer=nn.ReLU, inplace=None, bias: bool = True, dropout: float = 0.0")
    function MLP:init(in_channels, hidden_channels, norm_layer, activation_layer, inplace, bias, dropout)
        -- params = {} if inplace is None else {"inplace": inplace}
        local params = inplace == nil and {} or { inplace = inplace }

        local layers = {}
        local in_dim = in_channels
        -- for hidden_dim in hidden_channels[:-1]:
        for i = 1, #hidden_channels - 1 do
            local hidden_dim = hidden_channels[i]
            -- layers.append(torch.nn.Linear(in_dim, hidden_dim, bias=bias))
            table.insert(layers, nn.Linear(in_dim, hidden_dim, { bias = bias }))
            if norm_layer ~= nil then
                table.insert(layers, norm_layer(hidden_dim))
            end
            -- layers.append(activation_layer(**params))
            table.insert(layers, activation_layer(params))
            -- layers.append(torch.nn.Dropout(dropout, **params))
            table.insert(layers, nn.Dropout(dropout, params))
            in_dim = hidden_dim
        end

        -- layers.append(torch.nn.Linear(in_dim, hidden_channels[-1], bias=bias))
        table.insert(layers, nn.Linear(in_dim, hidden_channels[#hidden_channels], { bias = bias }))
        table.insert(layers, nn.Dropout(dropout, params))

        -- super().__init__(*layers)
        nn.Sequential.init(self, unpack(layers))
    end

    -- class MLPBlock(MLP):
    local MLPBlock = MLP:extend("MLPBlock")
    MLPBlock._version = 2
    nn.signature(MLPBlock, "self, in_dim: int, mlp_dim: int, dropout: float")
    function MLPBlock:init(in_dim, mlp_dim, dropout)
        -- super().__init__(in_dim, [mlp_dim, in_dim], activation_layer=nn.GELU, inplace=None, dropout=dropout)
        MLP.init(self, in_dim, { mlp_dim, in_dim }, { activation_layer = nn.GELU, inplace = nil, dropout = dropout })

        for _, m in ipairs(self:modules()) do
            if isinstance(m, nn.Linear) then
                nn.init.xavier_uniform_(m.weight)
                if m.bias ~= nil then
                    -- nn.init.normal_(m.bias, std=1e-6)
                    nn.init.normal_(m.bias, { std = 1e-6 })
                end
            end
        end
    end

    -- class EncoderBlock(nn.Module):
    local EncoderBlock = nn.Module:extend("EncoderBlock")
    nn.signature(EncoderBlock, "self, num_heads: int, hidden_dim: int, mlp_dim: int, dropout: float, " ..
        "attention_dropout: float, norm_layer=None")
    function EncoderBlock:init(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer)
        -- norm_layer: Callable[..., torch.nn.Module] = partial(nn.LayerNorm, eps=1e-6),
        norm_layer = norm_layer or partial(nn.LayerNorm, { eps = 1e-6 })
        self.num_heads = num_heads

        -- Attention block
        self.ln_1 = norm_layer(hidden_dim)
        -- nn.MultiheadAttention(hidden_dim, num_heads, dropout=attention_dropout, batch_first=True)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads,
            { dropout = attention_dropout, batch_first = true })
        self.dropout = nn.Dropout(dropout)

        -- MLP block
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)
    end

    function EncoderBlock:forward(input)
        -- torch._assert(input.dim() == 3, f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        tide._assert(input:dim() == 3, string.format("Expected (batch_size, seq_length, hidden_dim) got %s",
            tostring(input.shape)))
        local x = self.ln_1(input)
        -- x, _ = self.self_attention(query=x, key=x, value=x, need_weights=False)
        x = self.self_attention({ query = x, key = x, value = x, need_weights = false })
        x = self.dropout(x)
        x = x + input

        local y = self.ln_2(x)
        y = self.mlp(y)
        return x + y
    end

    -- class Encoder(nn.Module):
    local Encoder = nn.Module:extend("Encoder")
    nn.signature(Encoder, "self, seq_length: int, num_layers: int, num_heads: int, hidden_dim: int, " ..
        "mlp_dim: int, dropout: float, attention_dropout: float, norm_layer=None")
    function Encoder:init(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                          norm_layer)
        norm_layer = norm_layer or partial(nn.LayerNorm, { eps = 1e-6 })
        -- self.pos_embedding = nn.Parameter(torch.empty(1, seq_length, hidden_dim).normal_(std=0.02))  # from BERT
        self.pos_embedding = nn.Parameter(tide.empty(1, seq_length, hidden_dim):normal_({ std = 0.02 }))
        self.dropout = nn.Dropout(dropout)
        -- layers: OrderedDict[str, nn.Module] = OrderedDict()
        local layers = {}
        for i = 0, num_layers - 1 do
            -- layers[f"encoder_layer_{i}"] = EncoderBlock(...)
            table.insert(layers, { "encoder_layer_" .. i, EncoderBlock(
                num_heads,
                hidden_dim,
                mlp_dim,
                dropout,
                attention_dropout,
                norm_layer
            ) })
        end
        self.layers = nn.Sequential(layers)
        self.ln = norm_layer(hidden_dim)
    end

    function Encoder:forward(input)
        tide._assert(input:dim() == 3, string.format("Expected (batch_size, seq_length, hidden_dim) got %s",
            tostring(input.shape)))
        input = input + self.pos_embedding
        return self.ln(self.layers(self.dropout(input)))
    end

    -- class VisionTransformer(nn.Module):
    local VisionTransformer = nn.Module:extend("VisionTransformer")
    nn.signature(VisionTransformer, "self, image_size: int, patch_size: int, num_layers: int, num_heads: int, " ..
        "hidden_dim: int, mlp_dim: int, dropout: float = 0.0, attention_dropout: float = 0.0, " ..
        "num_classes: int = 1000, representation_size: Optional[int] = None, norm_layer=None, " ..
        "conv_stem_configs=None")
    function VisionTransformer:init(image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                                    attention_dropout, num_classes, representation_size, norm_layer,
                                    conv_stem_configs)
        norm_layer = norm_layer or partial(nn.LayerNorm, { eps = 1e-6 })
        tide._assert(image_size % patch_size == 0, "Input shape indivisible by patch size!")
        self.image_size = image_size
        self.patch_size = patch_size
        self.hidden_dim = hidden_dim
        self.mlp_dim = mlp_dim
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.num_classes = num_classes
        self.representation_size = representation_size
        self.norm_layer = norm_layer

        if conv_stem_configs ~= nil then
            -- As per https://arxiv.org/abs/2106.14881
            local seq_proj = nn.Sequential()
            local prev_channels = 3
            -- for i, conv_stem_layer_config in enumerate(conv_stem_configs):
            for i, conv_stem_layer_config in ipairs(conv_stem_configs) do
                seq_proj:add_module(
                    -- f"conv_bn_relu_{i}",
                    "conv_bn_relu_" .. (i - 1),
                    Conv2dNormActivation({
                        in_channels = prev_channels,
                        out_channels = conv_stem_layer_config.out_channels,
                        kernel_size = conv_stem_layer_config.kernel_size,
                        stride = conv_stem_layer_config.stride,
                        norm_layer = conv_stem_layer_config.norm_layer,
                        activation_layer = conv_stem_layer_config.activation_layer,
                    })
                )
                prev_channels = conv_stem_layer_config.out_channels
            end
            seq_proj:add_module(
                -- "conv_last", nn.Conv2d(in_channels=prev_channels, out_channels=hidden_dim, kernel_size=1)
                "conv_last", nn.Conv2d({ in_channels = prev_channels, out_channels = hidden_dim, kernel_size = 1 })
            )
            self.conv_proj = seq_proj
        else
            self.conv_proj = nn.Conv2d(
                -- in_channels=3, out_channels=hidden_dim, kernel_size=patch_size, stride=patch_size
                { in_channels = 3, out_channels = hidden_dim, kernel_size = patch_size, stride = patch_size }
            )
        end

        -- seq_length = (image_size // patch_size) ** 2
        local seq_length = math.floor(image_size / patch_size) ^ 2

        -- Add a class token
        self.class_token = nn.Parameter(tide.zeros(1, 1, hidden_dim))
        seq_length = seq_length + 1

        self.encoder = Encoder(
            seq_length,
            num_layers,
            num_heads,
            hidden_dim,
            mlp_dim,
            dropout,
            attention_dropout,
            norm_layer
        )
        self.seq_length = seq_length

        -- heads_layers: OrderedDict[str, nn.Module] = OrderedDict()
        local heads_layers = {}
        if representation_size == nil then
            -- heads_layers["head"] = nn.Linear(hidden_dim, num_classes)
            table.insert(heads_layers, { "head", nn.Linear(hidden_dim, num_classes) })
        else
            table.insert(heads_layers, { "pre_logits", nn.Linear(hidden_dim, representation_size) })
            table.insert(heads_layers, { "act", nn.Tanh() })
            table.insert(heads_layers, { "head", nn.Linear(representation_size, num_classes) })
        end

        self.heads = nn.Sequential(heads_layers)

        if isinstance(self.conv_proj, nn.Conv2d) then
            -- Init the patchify stem
            -- fan_in = self.conv_proj.in_channels * self.conv_proj.kernel_size[0] * self.conv_proj.kernel_size[1]
            local fan_in = self.conv_proj.in_channels * self.conv_proj.kernel_size[1] * self.conv_proj.kernel_size[2]
            -- nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
            nn.init.trunc_normal_(self.conv_proj.weight, { std = math.sqrt(1 / fan_in) })
            if self.conv_proj.bias ~= nil then
                nn.init.zeros_(self.conv_proj.bias)
            end
        elseif self.conv_proj.conv_last ~= nil and isinstance(self.conv_proj.conv_last, nn.Conv2d) then
            -- Init the last 1x1 conv of the conv stem
            nn.init.normal_(
                -- self.conv_proj.conv_last.weight, mean=0.0, std=math.sqrt(2.0 / self.conv_proj.conv_last.out_channels)
                self.conv_proj.conv_last.weight,
                { mean = 0.0, std = math.sqrt(2.0 / self.conv_proj.conv_last.out_channels) }
            )
            if self.conv_proj.conv_last.bias ~= nil then
                nn.init.zeros_(self.conv_proj.conv_last.bias)
            end
        end

        -- if hasattr(self.heads, "pre_logits") and isinstance(self.heads.pre_logits, nn.Linear):
        if self.heads.pre_logits ~= nil and isinstance(self.heads.pre_logits, nn.Linear) then
            local fan_in = self.heads.pre_logits.in_features
            nn.init.trunc_normal_(self.heads.pre_logits.weight, { std = math.sqrt(1 / fan_in) })
            nn.init.zeros_(self.heads.pre_logits.bias)
        end

        if isinstance(self.heads.head, nn.Linear) then
            nn.init.zeros_(self.heads.head.weight)
            nn.init.zeros_(self.heads.head.bias)
        end
    end

    function VisionTransformer:_process_input(x)
        -- n, c, h, w = x.shape
        local n, c, h, w = unpack(x.shape) -- luacheck: ignore c
        local p = self.patch_size
        tide._assert(h == self.image_size, string.format("Wrong image height! Expected %s but got %s!",
            self.image_size, h))
        tide._assert(w == self.image_size, string.format("Wrong image width! Expected %s but got %s!",
            self.image_size, w))
        -- n_h = h // p
        local n_h = math.floor(h / p)
        local n_w = math.floor(w / p)

        -- (n, c, h, w) -> (n, hidden_dim, n_h, n_w)
        x = self.conv_proj(x)
        -- (n, hidden_dim, n_h, n_w) -> (n, hidden_dim, (n_h * n_w))
        x = x:reshape(n, self.hidden_dim, n_h * n_w)

        -- (n, hidden_dim, (n_h * n_w)) -> (n, (n_h * n_w), hidden_dim)
        -- x = x.permute(0, 2, 1)
        x = x:permute(1, 3, 2)

        return x
    end

    function VisionTransformer:forward(x)
        -- Reshape and permute the input tensor
        x = self:_process_input(x)
        -- n = x.shape[0]
        local n = x.shape[1]

        -- Expand the class token to the full batch
        local batch_class_token = self.class_token:expand(n, -1, -1)
        -- x = torch.cat([batch_class_token, x], dim=1)
        x = tide.cat({ batch_class_token, x }, { dim = 2 })

        x = self.encoder(x)

        -- Classifier "token" as used by standard language architectures
        -- x = x[:, 0]
        x = x[{ {}, 1 }]

        x = self.heads(x)

        return x
    end

    it("VisionTransformer: shapes, OrderedDict names, the init (head zeros, pos_embedding std)", function()
        tide.manual_seed(0)
        -- vit_b_16's 16 / 12 / 12 / 768 / 3072 at 224: here image_size 32, patch 8, 2 layers, 2 heads, 16 / 32
        local model = VisionTransformer({ image_size = 32, patch_size = 8, num_layers = 2, num_heads = 2,
            hidden_dim = 16, mlp_dim = 32, num_classes = 5 })
        assert.are.equal(17, model.seq_length)
        assert.are.same({ 1, 17, 16 }, { model.encoder.pos_embedding:size(1), model.encoder.pos_embedding:size(2),
            model.encoder.pos_embedding:size(3) })
        local sd = model:state_dict()
        -- (a Sequential's children are named from 1: PyTorch's mlp.3 is mlp.4)
        assert.is_true(sd["encoder.layers.encoder_layer_1.mlp.4.weight"] ~= nil)
        assert.is_true(sd["heads.head.weight"] ~= nil)
        assert.are.equal(0, model.heads.head.weight:abs():sum():item())
        local y = model(tide.randn(2, 3, 32, 32))
        assert.are.same({ 2, 5 }, { y:size(1), y:size(2) })
        -- the representation_size branch: pre_logits, act, head
        local m2 = VisionTransformer(32, 8, 1, 2, 16, 32, { num_classes = 3, representation_size = 8 })
        assert.are.equal(8, m2.heads.pre_logits.out_features)
        assert.are.same({ 2, 3 }, { m2(tide.randn(2, 3, 32, 32)):size(1), 3 })
        -- _process_input's asserts
        assert.has_error(function() model(tide.randn(1, 3, 16, 16)) end)
    end)

    it("VisionTransformer: forward against PyTorch, then AdamW steps", function()
        local model = VisionTransformer(32, 8, 2, 2, 16, 32, { num_classes = 5 })
        check_forward(model, VIT_WANT, 32, 5)
        train_steps(model, 5, 32)
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. the gaps these ports met
---------------------------------------------------------------------------------------------
describe("gaps met porting torchvision's convnext and vision_transformer", function()
    it("tide.Size * n repeats a shape as Python's tuple repetition", function()
        assert.are.same({ 1, 1, 1 }, { unpack(tide.Size({ 1 }) * 3) })
        assert.are.same({ 2, 3, 2, 3 }, { unpack(2 * tide.Size({ 2, 3 })) })
        assert.are.equal(0, #(tide.Size({ 1 }) * -1)) -- Python's (1,) * -1 is ()
        assert.are.equal("tide.Size({4, 1, 1})", tostring(tide.Size({ 4 }) + tide.Size({ 1 }) * 2))
        assert.has_error(function() return tide.Size({ 1 }) * 1.5 end,
            "tide: Size * 1.5: a shape repeats a whole number of times, as Python's tuples: " ..
            "tide.Size({1}) * 3")
        assert.has_error(function() return tide.Size({ 1 }) * 1e15 end)
    end)

    it("tide._assert is torch._assert: a boolean or one-element tensor, the message raised", function()
        tide._assert(true, "never")
        tide._assert(tide.tensor(1), "never")
        tide._assert(tide.ones(1):eq(1), "never")
        local ok, err = pcall(tide._assert, 32 % 5 == 0, "Input shape indivisible by patch size!")
        assert.is_false(ok)
        assert.truthy(tostring(err):find("Input shape indivisible by patch size!", 1, true))
        assert.has_error(function() tide._assert(tide.tensor(0), "zero") end, "zero")
        -- bad input: a many-element condition, a message that is not a string
        assert.has_error(function() tide._assert(tide.ones(3), "m") end,
            "tide: _assert: a condition tensor must have one element (its truth is ambiguous " ..
            "otherwise), got shape {3}; reduce it first: tide._assert(x:all(), msg)")
        local ok2, err2 = pcall(tide._assert, true, 5)
        assert.is_false(ok2)
        assert.truthy(tostring(err2):find("tide: _assert: message must be a string, got a number", 1, true))
    end)

    it("Base.init(self, ...) of an nn.signature class takes PyTorch's arguments (super().__init__)", function()
        -- MLPBlock's super().__init__(in_dim, [mlp_dim, in_dim], activation_layer=nn.GELU, inplace=None, dropout=dropout)
        local Base = nn.Module:extend("SigBase")
        nn.signature(Base, "self, a, hidden: List[int], norm=None, act=nn.ReLU, bias=True, p=0.0")
        function Base:init(a, hidden, norm, act, bias, p)
            self.got = { a = a, hidden = hidden, norm = norm, act = act, bias = bias, p = p }
        end
        local Child = Base:extend("SigChild")
        function Child:init(a)
            Base.init(self, a, { 4, a }, { act = nn.GELU, p = 0.25 })
        end
        local c = Child(3)
        assert.are.same({ 4, 3 }, c.got.hidden)
        assert.is_nil(c.got.norm)
        assert.are.equal(nn.GELU, c.got.act)
        assert.are.equal(true, c.got.bias)
        assert.are.equal(0.25, c.got.p)
        -- the constructor itself, and a subclass without its own init (Python's inherited __init__)
        local b = Base(2, { 5 }, { bias = false })
        assert.are.same({ a = 2, hidden = { 5 }, act = nn.ReLU, bias = false, p = 0.0 }, b.got)
        local Plain = Base:extend("SigPlain")
        local pl = Plain(1, { 2 }, { p = 0.5 })
        assert.are.equal(0.5, pl.got.p)
        assert.are.equal(nn.ReLU, pl.got.act)
        -- init defined before nn.signature is wrapped too; bad input raises naming the class
        local Early = nn.Module:extend("SigEarly")
        function Early:init(x, y) self.x, self.y = x, y end
        nn.signature(Early, "self, x, y=7")
        local E2 = Early:extend("SigEarly2")
        function E2:init() Early.init(self, { x = 1 }) end
        assert.are.same({ 1, 7 }, { E2().x, E2().y })
        assert.has_error(function() Base.init({}, 1, { 2 }, { nope = 1 }) end)
        assert.has_error(function() Base.init({}) end,
            "tide: SigBase: missing its required argument a (argument #1, or {a =})")
    end)

    it("nn.MultiheadAttention takes query, key and value by name (need_weights=False)", function()
        tide.manual_seed(3)
        local mha = nn.MultiheadAttention(8, 2, { batch_first = true })
        local x = tide.randn(2, 5, 8)
        local want, wantw = mha(x, x, x)
        -- x, _ = self.self_attention(query=x, key=x, value=x, need_weights=False)
        local out, w = mha({ query = x, key = x, value = x, need_weights = false })
        assert.is_nil(w)
        assert.is_true(tide.allclose(want, out))
        local out2, w2 = mha(x, { key = x, value = x })
        assert.is_true(tide.allclose(want, out2))
        assert.is_true(tide.allclose(wantw, w2))
        assert.has_error(function() mha(x, { query = x, key = x, value = x }) end,
            "tide: MultiheadAttention: got query both as argument #1 and by name {query =}; give it once")
    end)
end)
