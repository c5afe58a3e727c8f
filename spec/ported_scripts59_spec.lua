-- ported_scripts59_spec.lua — huggingface/pytorch-image-models (timm) timm/models/resnet.py
-- (get_padding, BasicBlock, Bottleneck, downsample_conv, downsample_avg, drop_blocks,
-- make_blocks, ResNet with stem_type '' and 'deep', forward_features/forward_head/forward,
-- zero_init_last, init_weights) with timm/layers' create_aa (aa_layer None), create_attn,
-- squeeze_excite.py's SEModule, helpers.py's make_divisible, drop.py's DropPath and
-- classifier.py's create_classifier ('avg' pool), and junyanz/pytorch-CycleGAN-and-pix2pix's
-- models/pix2pix_model.py (Pix2PixModel: set_input, forward, backward_D, backward_G with
-- GANLoss + L1 * lambda_L1, optimize_parameters, BaseModel.set_requires_grad) over
-- models/networks.py's UnetGenerator, NLayerDiscriminator and GANLoss ('vanilla', 'lsgan'),
-- shared with ported_scripts31 (spec/support/cyclegan_networks.lua). Ported line for line at
-- tiny sizes (4-8 channels, 16x16 and 32x32 inputs); values checked against PyTorch 1.13 on
-- deterministic weights (the Python classes pasted into the venv). BaseModel's option/file
-- plumbing (setup, schedulers, save/load_networks, get_current_visuals/losses, print_networks)
-- is skipped: the model takes a plain opt table. The Python line stands above each Lua line
-- that differs from it. Dims are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local init = nn.init
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- x.shape as a plain list
local function dims(t)
    local d = {}
    for i = 1, t:dim() do d[i] = t:size(i) end
    return d
end

-- Python's dict(a, **b, **c): a new table holding each table's entries in turn
local function dict(...)
    local out = {}
    for i = 1, select("#", ...) do
        for k, v in pairs(select(i, ...) or {}) do out[k] = v end
    end
    return out
end

-- Python's list += [...]
local function extend(list, items)
    for _, v in ipairs(items) do list[#list + 1] = v end
    return list
end

-- the Python check's deterministic weights:
-- for i, (n, p) in enumerate(sorted(m.named_parameters())):
--     p.copy_((torch.arange(p.numel(), dtype=torch.float32)*0.37 + (i+1)).sin().reshape(p.shape)*0.3)
local function det(m)
    local nps = m:named_parameters()
    table.sort(nps, function(a, b) return a[1] < b[1] end)
    tide.no_grad(function()
        for i, np in ipairs(nps) do
            local p = np[2]
            p:copy_(((tide.arange(p:numel(), { dtype = "float32" }) * 0.37 + i):sin()
                :reshape(p.shape) * 0.3))
        end
    end)
    return m
end
-- (torch.arange(n, dtype=torch.float32)*0.13).sin().reshape(s)
local function inp(...)
    local s, n = { ... }, 1
    for _, v in ipairs(s) do n = n * v end
    return (tide.arange(n, { dtype = "float32" }) * 0.13):sin():reshape(s)
end
-- the Python check prints sum, the first 4 and the last value of y.flatten()
local function check(y, want, what)
    y = y:detach():flatten()
    local got = { y:sum():item() }
    for i = 1, 4 do got[#got + 1] = y[i]:item() end
    got[#got + 1] = y[-1]:item()
    assert_close_list(want, got, 1e-4, what)
end

---------------------------------------------------------------------------------------------
-- timm/layers: the pieces resnet.py imports
---------------------------------------------------------------------------------------------
-- def make_divisible(v, divisor=8, min_value=None, round_limit=.9):
local function make_divisible(v, divisor, min_value, round_limit)
    divisor, round_limit = divisor or 8, round_limit or 0.9
    min_value = min_value or divisor
    -- new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    local new_v = math.max(min_value, math.floor(math.floor(v + divisor / 2) / divisor) * divisor)
    if new_v < round_limit * v then
        new_v = new_v + divisor
    end
    return new_v
end

-- def drop_path(x, drop_prob: float = 0., training: bool = False, scale_by_keep: bool = True):
local function drop_path(x, drop_prob, training, scale_by_keep)
    if drop_prob == 0. or not training then
        return x
    end
    local keep_prob = 1 - drop_prob
    -- shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    local shape = { x.shape[1] }
    for i = 2, x.ndim do shape[i] = 1 end
    -- random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    local random_tensor = x:new_empty(shape):bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep then
        random_tensor:div_(keep_prob)
    end
    return x * random_tensor
end

-- class DropPath(nn.Module):
local DropPath = nn.Module:extend("DropPath")
nn.signature(DropPath, "drop_prob: float = 0., scale_by_keep: bool = True")
function DropPath:init(drop_prob, scale_by_keep)
    self.drop_prob = drop_prob
    self.scale_by_keep = scale_by_keep
end
function DropPath:forward(x)
    return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
end

-- class SEModule(nn.Module):  (norm_layer None, gate 'sigmoid', written out)
local SEModule = nn.Module:extend("SEModule")
nn.signature(SEModule, "channels, rd_ratio=0.0625, rd_channels=None, rd_divisor=8, " ..
    "add_maxpool=False, bias=True, act_layer=nn.ReLU, norm_layer=None, gate_layer='sigmoid', " ..
    "device=None, dtype=None")
function SEModule:init(channels, rd_ratio, rd_channels, rd_divisor, add_maxpool, bias, act_layer,
                       norm_layer, gate_layer, device, dtype)
    -- dd = {'device': device, 'dtype': dtype}
    local dd = { device = device, dtype = dtype }
    self.add_maxpool = add_maxpool
    if not rd_channels then
        -- rd_channels = make_divisible(channels * rd_ratio, rd_divisor, round_limit=0.)
        rd_channels = make_divisible(channels * rd_ratio, rd_divisor, nil, 0.)
    end
    -- self.fc1 = nn.Conv2d(channels, rd_channels, kernel_size=1, bias=bias, **dd)
    self.fc1 = nn.Conv2d(channels, rd_channels, dict({ kernel_size = 1, bias = bias }, dd))
    -- self.bn = norm_layer(rd_channels, **dd) if norm_layer else nn.Identity()
    self.bn = norm_layer and norm_layer(rd_channels, dd) or nn.Identity()
    -- self.act = create_act_layer(act_layer, inplace=True)
    self.act = act_layer({ inplace = true })
    self.fc2 = nn.Conv2d(rd_channels, channels, dict({ kernel_size = 1, bias = bias }, dd))
    -- self.gate = create_act_layer(gate_layer)  ('sigmoid' -> nn.Sigmoid)
    assert(gate_layer == "sigmoid")
    self.gate = nn.Sigmoid()
end

function SEModule:forward(x)
    -- x_se = x.mean((2, 3), keepdim=True)
    local x_se = x:mean({ 3, 4 }, { keepdim = true })
    if self.add_maxpool then
        -- x_se = 0.5 * x_se + 0.5 * x.amax((2, 3), keepdim=True)
        x_se = 0.5 * x_se + 0.5 * x:amax({ 3, 4 }, { keepdim = true })
    end
    x_se = self.fc1(x_se)
    x_se = self.act(self.bn(x_se))
    x_se = self.fc2(x_se)
    return x * self.gate(x_se)
end

-- def create_aa(aa_layer, channels=None, stride=2, enable=True, noop=nn.Identity, ...):
local function create_aa(aa_layer, opts)
    opts = opts or {}
    local enable, noop = opts.enable, opts.noop
    if enable == nil then enable = true end
    if noop == nil then noop = nn.Identity end
    -- if not aa_layer or not enable: return noop() if noop is not None else None
    if not aa_layer or not enable then
        return noop and noop() or nil
    end
    -- the blur-pool path (BlurPool2d and friends) is not ported: resnet's aa_layer is None here
    error("create_aa: only aa_layer None is ported here")
end

-- def create_attn(attn_type, channels, **kwargs):  (get_attn: a class passes through)
local function create_attn(attn_type, channels, kwargs)
    local module_cls = attn_type
    if module_cls ~= nil then
        -- return module_cls(channels, **kwargs): Python's **{} is no keywords; in Lua an empty
        -- table would be a positional value (the second parameter), so it is left out
        if kwargs == nil or next(kwargs) == nil then
            return module_cls(channels)
        end
        return module_cls(channels, kwargs)
    end
    return nil
end

-- def create_classifier(num_features, num_classes, pool_type='avg', ...): SelectAdaptivePool2d
-- with pool_type 'avg' and flatten (nn.AdaptiveAvgPool2d(1) then nn.Flatten(1)), nn.Linear
local SelectAdaptivePool2d = nn.Module:extend("SelectAdaptivePool2d")
function SelectAdaptivePool2d:init(pool_type, flatten)
    assert(pool_type == "avg")
    self.pool_type = pool_type
    self.pool = nn.AdaptiveAvgPool2d(1)
    -- self.flatten = nn.Flatten(1) if flatten else nn.Identity()
    self.flatten = flatten and nn.Flatten(2) or nn.Identity()
end
function SelectAdaptivePool2d:forward(x)
    x = self.pool(x)
    x = self.flatten(x)
    return x
end

local function create_classifier(num_features, num_classes, pool_type, dd)
    local global_pool = SelectAdaptivePool2d(pool_type, true)
    local fc
    if num_classes <= 0 then
        fc = nn.Identity() -- pass-through (no classifier)
    else
        -- fc = nn.Linear(num_features, num_classes, bias=True, device=device, dtype=dtype)
        fc = nn.Linear(num_features, num_classes, dict({ bias = true }, dd))
    end
    return global_pool, fc
end

---------------------------------------------------------------------------------------------
-- timm/models/resnet.py
---------------------------------------------------------------------------------------------
-- def get_padding(kernel_size: int, stride: int, dilation: int = 1) -> int:
local function get_padding(kernel_size, stride, dilation)
    dilation = dilation or 1
    -- padding = ((stride - 1) + dilation * (kernel_size - 1)) // 2
    local padding = math.floor(((stride - 1) + dilation * (kernel_size - 1)) / 2)
    return padding
end

local BLOCK_ARGS = "inplanes, planes, stride=1, downsample=None, cardinality=1, base_width=64, " ..
    "reduce_first=1, dilation=1, first_dilation=None, act_layer=nn.ReLU, " ..
    "norm_layer=nn.BatchNorm2d, attn_layer=None, aa_layer=None, drop_block=None, " ..
    "drop_path=None, device=None, dtype=None"

-- class BasicBlock(nn.Module):
local BasicBlock = nn.Module:extend("BasicBlock")
BasicBlock.expansion = 1
nn.signature(BasicBlock, BLOCK_ARGS)
function BasicBlock:init(inplanes, planes, stride, downsample, cardinality, base_width, reduce_first,
                         dilation, first_dilation, act_layer, norm_layer, attn_layer, aa_layer,
                         drop_block, drop_path_, device, dtype)
    local dd = { device = device, dtype = dtype }
    assert(cardinality == 1, "BasicBlock only supports cardinality of 1")
    assert(base_width == 64, "BasicBlock does not support changing base width")
    -- first_planes = planes // reduce_first
    local first_planes = math.floor(planes / reduce_first)
    local outplanes = planes * self.expansion
    first_dilation = first_dilation or dilation
    -- use_aa = aa_layer is not None and (stride == 2 or first_dilation != dilation)
    local use_aa = aa_layer ~= nil and (stride == 2 or first_dilation ~= dilation)

    -- self.conv1 = nn.Conv2d(inplanes, first_planes, kernel_size=3, stride=1 if use_aa else stride,
    --     padding=first_dilation, dilation=first_dilation, bias=False, **dd)
    self.conv1 = nn.Conv2d(inplanes, first_planes, dict({ kernel_size = 3,
        stride = use_aa and 1 or stride, padding = first_dilation, dilation = first_dilation,
        bias = false }, dd))
    self.bn1 = norm_layer(first_planes, dd)
    -- self.drop_block = drop_block() if drop_block is not None else nn.Identity()
    self.drop_block = drop_block and drop_block() or nn.Identity()
    self.act1 = act_layer({ inplace = true })
    -- self.aa = create_aa(aa_layer, channels=first_planes, stride=stride, enable=use_aa, **dd)
    self.aa = create_aa(aa_layer, dict({ channels = first_planes, stride = stride,
        enable = use_aa }, dd))

    self.conv2 = nn.Conv2d(first_planes, outplanes, dict({ kernel_size = 3, padding = dilation,
        dilation = dilation, bias = false }, dd))
    self.bn2 = norm_layer(outplanes, dd)

    -- self.se = create_attn(attn_layer, outplanes, **dd)
    self.se = create_attn(attn_layer, outplanes, dd)

    self.act2 = act_layer({ inplace = true })
    self.downsample = downsample
    self.stride = stride
    self.dilation = dilation
    self.drop_path = drop_path_
end

function BasicBlock:zero_init_last()
    -- if getattr(self.bn2, 'weight', None) is not None:
    if self.bn2.weight ~= nil then
        init.zeros_(self.bn2.weight)
    end
end

function BasicBlock:forward(x)
    local shortcut = x

    x = self.conv1(x)
    x = self.bn1(x)
    x = self.drop_block(x)
    x = self.act1(x)
    x = self.aa(x)

    x = self.conv2(x)
    x = self.bn2(x)

    if self.se ~= nil then
        x = self.se(x)
    end

    if self.drop_path ~= nil then
        x = self.drop_path(x)
    end

    if self.downsample ~= nil then
        shortcut = self.downsample(shortcut)
    end
    -- x += shortcut
    x:add_(shortcut)
    x = self.act2(x)

    return x
end

-- class Bottleneck(nn.Module):
local Bottleneck = nn.Module:extend("Bottleneck")
Bottleneck.expansion = 4
nn.signature(Bottleneck, BLOCK_ARGS)
function Bottleneck:init(inplanes, planes, stride, downsample, cardinality, base_width, reduce_first,
                         dilation, first_dilation, act_layer, norm_layer, attn_layer, aa_layer,
                         drop_block, drop_path_, device, dtype)
    local dd = { device = device, dtype = dtype }
    -- width = int(math.floor(planes * (base_width / 64)) * cardinality)
    local width = math.floor(planes * (base_width / 64)) * cardinality
    -- first_planes = width // reduce_first
    local first_planes = math.floor(width / reduce_first)
    local outplanes = planes * self.expansion
    first_dilation = first_dilation or dilation
    local use_aa = aa_layer ~= nil and (stride == 2 or first_dilation ~= dilation)

    -- self.conv1 = nn.Conv2d(inplanes, first_planes, kernel_size=1, bias=False, **dd)
    self.conv1 = nn.Conv2d(inplanes, first_planes, dict({ kernel_size = 1, bias = false }, dd))
    self.bn1 = norm_layer(first_planes, dd)
    self.act1 = act_layer({ inplace = true })

    self.conv2 = nn.Conv2d(first_planes, width, dict({ kernel_size = 3,
        stride = use_aa and 1 or stride, padding = first_dilation, dilation = first_dilation,
        groups = cardinality, bias = false }, dd))
    self.bn2 = norm_layer(width, dd)
    self.drop_block = drop_block and drop_block() or nn.Identity()
    self.act2 = act_layer({ inplace = true })
    self.aa = create_aa(aa_layer, dict({ channels = width, stride = stride, enable = use_aa }, dd))

    self.conv3 = nn.Conv2d(width, outplanes, dict({ kernel_size = 1, bias = false }, dd))
    self.bn3 = norm_layer(outplanes, dd)

    self.se = create_attn(attn_layer, outplanes, dd)

    self.act3 = act_layer({ inplace = true })
    self.downsample = downsample
    self.stride = stride
    self.dilation = dilation
    self.drop_path = drop_path_
end

function Bottleneck:zero_init_last()
    if self.bn3.weight ~= nil then
        init.zeros_(self.bn3.weight)
    end
end

function Bottleneck:forward(x)
    local shortcut = x

    x = self.conv1(x)
    x = self.bn1(x)
    x = self.act1(x)

    x = self.conv2(x)
    x = self.bn2(x)
    x = self.drop_block(x)
    x = self.act2(x)
    x = self.aa(x)

    x = self.conv3(x)
    x = self.bn3(x)

    if self.se ~= nil then
        x = self.se(x)
    end

    if self.drop_path ~= nil then
        x = self.drop_path(x)
    end

    if self.downsample ~= nil then
        shortcut = self.downsample(shortcut)
    end
    x:add_(shortcut)
    x = self.act3(x)

    return x
end

-- def downsample_conv(in_channels, out_channels, kernel_size, stride=1, dilation=1,
--                     first_dilation=None, norm_layer=None, device=None, dtype=None):
local function downsample_conv(o)
    local dd = { device = o.device, dtype = o.dtype }
    local in_channels, out_channels, kernel_size = o.in_channels, o.out_channels, o.kernel_size
    local stride, dilation, first_dilation = o.stride or 1, o.dilation or 1, o.first_dilation
    local norm_layer = o.norm_layer or nn.BatchNorm2d
    -- kernel_size = 1 if stride == 1 and dilation == 1 else kernel_size
    kernel_size = (stride == 1 and dilation == 1) and 1 or kernel_size
    -- first_dilation = (first_dilation or dilation) if kernel_size > 1 else 1
    if kernel_size > 1 then first_dilation = first_dilation or dilation else first_dilation = 1 end
    local p = get_padding(kernel_size, stride, first_dilation)

    -- return nn.Sequential(*[nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride,
    --     padding=p, dilation=first_dilation, bias=False, **dd), norm_layer(out_channels, **dd)])
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, kernel_size, dict({ stride = stride, padding = p,
            dilation = first_dilation, bias = false }, dd)),
        norm_layer(out_channels, dd))
end

-- def downsample_avg(in_channels, out_channels, kernel_size, stride=1, dilation=1,
--                    first_dilation=None, norm_layer=None, device=None, dtype=None):
local function downsample_avg(o)
    local dd = { device = o.device, dtype = o.dtype }
    local in_channels, out_channels = o.in_channels, o.out_channels
    local stride, dilation = o.stride or 1, o.dilation or 1
    local norm_layer = o.norm_layer or nn.BatchNorm2d
    -- avg_stride = stride if dilation == 1 else 1
    local avg_stride = dilation == 1 and stride or 1
    local pool
    if stride == 1 and dilation == 1 then
        pool = nn.Identity()
    else
        -- avg_pool_fn = AvgPool2dSame if avg_stride == 1 and dilation > 1 else nn.AvgPool2d
        -- GAP: AvgPool2dSame (timm's 'same'-padded pool, for dilated nets) is not ported here
        assert(not (avg_stride == 1 and dilation > 1), "AvgPool2dSame is not ported here")
        -- pool = avg_pool_fn(2, avg_stride, ceil_mode=True, count_include_pad=False)
        pool = nn.AvgPool2d(2, avg_stride, { ceil_mode = true, count_include_pad = false })
    end

    -- return nn.Sequential(*[pool, nn.Conv2d(in_channels, out_channels, 1, stride=1, padding=0,
    --     bias=False, **dd), norm_layer(out_channels, **dd)])
    return nn.Sequential(
        pool,
        nn.Conv2d(in_channels, out_channels, 1, dict({ stride = 1, padding = 0, bias = false }, dd)),
        norm_layer(out_channels, dd))
end

-- def drop_blocks(drop_prob: float = 0.) -> List[Optional[partial]]:
local function drop_blocks(drop_prob)
    drop_prob = drop_prob or 0
    -- partial(DropBlock2d, ...) if drop_prob else None: DropBlock2d is ported in
    -- spec/ported_scripts52_spec.lua; ResNet's drop_block_rate stays 0 here
    assert(drop_prob == 0, "drop_blocks: DropBlock2d is not ported in this file")
    -- return [None, None, None, None]: a Lua list of nils, read by index
    return { n = 4 }
end

-- def make_blocks(block_fns, channels, block_repeats, inplanes, reduce_first=1, output_stride=32,
--                 down_kernel_size=1, avg_down=False, drop_block_rate=0., drop_path_rate=0.,
--                 device=None, dtype=None, **kwargs):
local function make_blocks(block_fns, channels, block_repeats, inplanes, o)
    local reduce_first, output_stride = o.reduce_first or 1, o.output_stride or 32
    local down_kernel_size, avg_down = o.down_kernel_size or 1, o.avg_down or false
    local drop_block_rate, drop_path_rate = o.drop_block_rate or 0., o.drop_path_rate or 0.
    local dd = { device = o.device, dtype = o.dtype }
    -- **kwargs: every other entry
    local kwargs = dict(o)
    for _, k in ipairs({ "reduce_first", "output_stride", "down_kernel_size", "avg_down",
        "drop_block_rate", "drop_path_rate", "device", "dtype" }) do
        kwargs[k] = nil
    end
    local stages = {}
    local feature_info = {}
    -- net_num_blocks = sum(block_repeats)
    local net_num_blocks = 0
    for _, r in ipairs(block_repeats) do net_num_blocks = net_num_blocks + r end
    local net_block_idx = 0
    local net_stride = 4
    local dilation, prev_dilation = 1, 1
    local dbs = drop_blocks(drop_block_rate)
    -- for stage_idx, (block_fn, planes, num_blocks, db) in enumerate(zip(block_fns, channels,
    --         block_repeats, drop_blocks(drop_block_rate))):
    for stage_idx = 0, #block_fns - 1 do
        local block_fn, planes = block_fns[stage_idx + 1], channels[stage_idx + 1]
        local num_blocks, db = block_repeats[stage_idx + 1], dbs[stage_idx + 1]
        -- stage_name = f'layer{stage_idx + 1}'
        local stage_name = "layer" .. (stage_idx + 1)
        local stride = stage_idx == 0 and 1 or 2
        if net_stride >= output_stride then
            dilation = dilation * stride
            stride = 1
        else
            net_stride = net_stride * stride
        end

        local downsample = nil
        if stride ~= 1 or inplanes ~= planes * block_fn.expansion then
            -- down_kwargs = dict(in_channels=inplanes, out_channels=planes * block_fn.expansion,
            --     kernel_size=down_kernel_size, stride=stride, dilation=dilation,
            --     first_dilation=prev_dilation, norm_layer=kwargs.get('norm_layer'), **dd)
            local down_kwargs = dict({ in_channels = inplanes,
                out_channels = planes * block_fn.expansion, kernel_size = down_kernel_size,
                stride = stride, dilation = dilation, first_dilation = prev_dilation,
                norm_layer = kwargs.norm_layer }, dd)
            -- downsample = downsample_avg(**down_kwargs) if avg_down else downsample_conv(**down_kwargs)
            downsample = avg_down and downsample_avg(down_kwargs) or downsample_conv(down_kwargs)
        end

        -- block_kwargs = dict(reduce_first=reduce_first, dilation=dilation, drop_block=db, **kwargs)
        local block_kwargs = dict({ reduce_first = reduce_first, dilation = dilation,
            drop_block = db }, kwargs)
        local blocks = {}
        for block_idx = 0, num_blocks - 1 do
            -- downsample = downsample if block_idx == 0 else None
            if block_idx ~= 0 then downsample = nil end
            if block_idx ~= 0 then stride = 1 end
            -- block_dpr = drop_path_rate * net_block_idx / (net_num_blocks - 1)
            local block_dpr = drop_path_rate * net_block_idx / (net_num_blocks - 1)
            -- blocks.append(block_fn(inplanes, planes, stride, downsample,
            --     first_dilation=prev_dilation, drop_path=DropPath(block_dpr) if block_dpr > 0. else None,
            --     **block_kwargs, **dd))
            blocks[#blocks + 1] = block_fn(inplanes, planes, stride, downsample,
                dict({ first_dilation = prev_dilation,
                    drop_path = block_dpr > 0. and DropPath(block_dpr) or nil }, block_kwargs, dd))
            prev_dilation = dilation
            inplanes = planes * block_fn.expansion
            net_block_idx = net_block_idx + 1
        end

        -- stages.append((stage_name, nn.Sequential(*blocks)))
        stages[#stages + 1] = { stage_name, nn.Sequential(unpack(blocks)) }
        -- feature_info.append(dict(num_chs=inplanes, reduction=net_stride, module=stage_name))
        feature_info[#feature_info + 1] = { num_chs = inplanes, reduction = net_stride,
            module = stage_name }
    end

    return stages, feature_info
end

-- class ResNet(nn.Module):
local ResNet = nn.Module:extend("ResNet")
nn.signature(ResNet, "block, layers, num_classes=1000, in_chans=3, output_stride=32, " ..
    "global_pool='avg', cardinality=1, base_width=64, stem_width=64, stem_type='', " ..
    "replace_stem_pool=False, block_reduce_first=1, down_kernel_size=1, avg_down=False, " ..
    "channels=(64, 128, 256, 512), act_layer=nn.ReLU, norm_layer=nn.BatchNorm2d, " ..
    "aa_layer=None, drop_rate=0.0, drop_path_rate=0., drop_block_rate=0., zero_init_last=True, " ..
    "block_args=None, device=None, dtype=None")
function ResNet:init(block, layers, num_classes, in_chans, output_stride, global_pool, cardinality,
                     base_width, stem_width, stem_type, replace_stem_pool, block_reduce_first,
                     down_kernel_size, avg_down, channels, act_layer, norm_layer, aa_layer,
                     drop_rate, drop_path_rate, drop_block_rate, zero_init_last, block_args,
                     device, dtype)
    local dd = { device = device, dtype = dtype }
    block_args = block_args or {}
    -- assert output_stride in (8, 16, 32)
    assert(output_stride == 8 or output_stride == 16 or output_stride == 32)
    self.num_classes = num_classes
    self.in_chans = in_chans
    self.drop_rate = drop_rate
    self.grad_checkpointing = false

    -- act_layer = get_act_layer(act_layer); norm_layer = get_norm_layer(norm_layer): classes
    -- pass through (timm's string names, 'relu', 'batchnorm', are not resolved here)

    -- Stem
    -- deep_stem = 'deep' in stem_type
    local deep_stem = stem_type:find("deep", 1, true) ~= nil
    -- inplanes = stem_width * 2 if deep_stem else 64
    local inplanes = deep_stem and stem_width * 2 or 64
    if deep_stem then
        local stem_chs = { stem_width, stem_width }
        if stem_type:find("tiered", 1, true) then
            -- stem_chs = (3 * (stem_width // 4), stem_width)
            stem_chs = { 3 * (math.floor(stem_width / 4)), stem_width }
        end
        -- self.conv1 = nn.Sequential(*[
        --     nn.Conv2d(in_chans, stem_chs[0], 3, stride=2, padding=1, bias=False, **dd), ...])
        self.conv1 = nn.Sequential(
            nn.Conv2d(in_chans, stem_chs[1], 3, dict({ stride = 2, padding = 1, bias = false }, dd)),
            norm_layer(stem_chs[1], dd),
            act_layer({ inplace = true }),
            nn.Conv2d(stem_chs[1], stem_chs[2], 3, dict({ stride = 1, padding = 1, bias = false }, dd)),
            norm_layer(stem_chs[2], dd),
            act_layer({ inplace = true }),
            nn.Conv2d(stem_chs[2], inplanes, 3, dict({ stride = 1, padding = 1, bias = false }, dd)))
    else
        -- self.conv1 = nn.Conv2d(in_chans, inplanes, kernel_size=7, stride=2, padding=3, bias=False, **dd)
        self.conv1 = nn.Conv2d(in_chans, inplanes, dict({ kernel_size = 7, stride = 2, padding = 3,
            bias = false }, dd))
    end
    self.bn1 = norm_layer(inplanes, dd)
    self.act1 = act_layer({ inplace = true })
    -- self.feature_info = [dict(num_chs=inplanes, reduction=2, module='act1')]
    self.feature_info = { { num_chs = inplanes, reduction = 2, module = "act1" } }

    -- Stem pooling: replace_stem_pool and aa_layer (blur pool) are not ported here
    assert(not replace_stem_pool and aa_layer == nil, "only the max-pool stem is ported here")
    self.maxpool = nn.MaxPool2d({ kernel_size = 3, stride = 2, padding = 1 })

    -- Feature Blocks
    -- block_fns = to_ntuple(len(channels))(block)
    local block_fns = {}
    for i = 1, #channels do block_fns[i] = block end
    -- stage_modules, stage_feature_info = make_blocks(block_fns, channels, layers, inplanes,
    --     cardinality=cardinality, ..., **block_args, **dd)
    local stage_modules, stage_feature_info = make_blocks(block_fns, channels, layers, inplanes,
        dict({ cardinality = cardinality, base_width = base_width, output_stride = output_stride,
            reduce_first = block_reduce_first, avg_down = avg_down,
            down_kernel_size = down_kernel_size, act_layer = act_layer, norm_layer = norm_layer,
            aa_layer = aa_layer, drop_block_rate = drop_block_rate,
            drop_path_rate = drop_path_rate }, block_args, dd))
    for _, stage in ipairs(stage_modules) do
        -- self.add_module(*stage)  # layer1, layer2, etc
        self:add_module(unpack(stage))
    end
    -- self.feature_info.extend(stage_feature_info)
    extend(self.feature_info, stage_feature_info)

    -- Head (Pooling and Classifier)
    -- self.num_features = self.head_hidden_size = channels[-1] * block_fns[-1].expansion
    self.num_features = channels[#channels] * block_fns[#block_fns].expansion
    self.head_hidden_size = self.num_features
    -- self.global_pool, self.fc = create_classifier(self.num_features, self.num_classes, pool_type=global_pool, **dd)
    self.global_pool, self.fc = create_classifier(self.num_features, self.num_classes, global_pool,
        dd)

    -- self.init_weights(zero_init_last=zero_init_last)
    self:init_weights(zero_init_last)
end

function ResNet:init_weights(zero_init_last)
    if zero_init_last == nil then zero_init_last = true end
    -- for n, m in self.named_modules():
    for _, nm in ipairs(self:named_modules()) do
        local m = nm[2]
        -- if isinstance(m, nn.Conv2d):
        if tide.isinstance(m, nn.Conv2d) then
            -- nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
            init.kaiming_normal_(m.weight, { mode = "fan_out", nonlinearity = "relu" })
        end
    end
    if zero_init_last then
        for _, m in ipairs(self:modules()) do
            -- if hasattr(m, 'zero_init_last'): m.zero_init_last()
            if m.zero_init_last ~= nil then
                m:zero_init_last()
            end
        end
    end
end

function ResNet:forward_features(x)
    x = self.conv1(x)
    x = self.bn1(x)
    x = self.act1(x)
    x = self.maxpool(x)

    -- grad_checkpointing (checkpoint_seq) is not ported: the flag stays False
    x = self.layer1(x)
    x = self.layer2(x)
    x = self.layer3(x)
    x = self.layer4(x)
    return x
end

-- def forward_head(self, x, pre_logits: bool = False):
function ResNet:forward_head(x, pre_logits)
    x = self.global_pool(x)
    if self.drop_rate ~= 0 then
        -- x = F.dropout(x, p=float(self.drop_rate), training=self.training)
        x = F.dropout(x, { p = self.drop_rate, training = self.training })
    end
    -- return x if pre_logits else self.fc(x)
    if pre_logits then return x end
    return self.fc(x)
end
nn.signature(ResNet, "self, x, pre_logits: bool = False", "forward_head")

function ResNet:forward(x)
    x = self:forward_features(x)
    x = self:forward_head(x)
    return x
end

---------------------------------------------------------------------------------------------
-- pytorch-CycleGAN-and-pix2pix models/networks.py: the pieces pix2pix uses, from
-- spec/support/cyclegan_networks.lua (ported for ported_scripts31_spec.lua)
---------------------------------------------------------------------------------------------
local N = require("spec.support.cyclegan_networks")
local Identity = N.Identity
local get_norm_layer = N.get_norm_layer
local init_weights = N.init_weights
local init_net = N.init_net
local GANLoss = N.GANLoss
local UnetGenerator = N.UnetGenerator
local NLayerDiscriminator = N.NLayerDiscriminator

-- def define_G(input_nc, output_nc, ngf, netG, norm='batch', use_dropout=False, init_type='normal',
--              init_gain=0.02, gpu_ids=[]):  (the unet branches; the resnet ones are in 31)
local function define_G(input_nc, output_nc, ngf, netG, norm, use_dropout, init_type, init_gain)
    local net
    local norm_layer = get_norm_layer(norm)
    if netG == "unet_128" then
        -- net = UnetGenerator(input_nc, output_nc, 7, ngf, norm_layer=norm_layer, use_dropout=use_dropout)
        net = UnetGenerator(input_nc, output_nc, 7, ngf,
            { norm_layer = norm_layer, use_dropout = use_dropout })
    elseif netG == "unet_256" then
        net = UnetGenerator(input_nc, output_nc, 8, ngf,
            { norm_layer = norm_layer, use_dropout = use_dropout })
    elseif netG == "unet_32" then -- not in networks.py: 5 levels, for the tiny 32x32 images here
        net = UnetGenerator(input_nc, output_nc, 5, ngf,
            { norm_layer = norm_layer, use_dropout = use_dropout })
    else
        error(("Generator model name [%s] is not recognized"):format(netG))
    end
    return init_net(net, init_type, init_gain)
end

-- def define_D(input_nc, ndf, netD, n_layers_D=3, norm='batch', init_type='normal',
--              init_gain=0.02, gpu_ids=[]):
local function define_D(input_nc, ndf, netD, n_layers_D, norm, init_type, init_gain)
    local net
    local norm_layer = get_norm_layer(norm)
    if netD == "basic" then -- default PatchGAN classifier
        -- net = NLayerDiscriminator(input_nc, ndf, n_layers=3, norm_layer=norm_layer)
        net = NLayerDiscriminator(input_nc, ndf, { n_layers = 3, norm_layer = norm_layer })
    elseif netD == "n_layers" then -- more options
        net = NLayerDiscriminator(input_nc, ndf, { n_layers = n_layers_D, norm_layer = norm_layer })
    else
        error(("Discriminator model name [%s] is not recognized"):format(netD))
    end
    return init_net(net, init_type, init_gain)
end

---------------------------------------------------------------------------------------------
-- models/pix2pix_model.py (the current master's; the stored copies are older: they
-- routed fake_AB through self.fake_AB_pool.query with pool_size=0, which returns it unchanged)
---------------------------------------------------------------------------------------------
-- class Pix2PixModel(BaseModel):  (a plain class: BaseModel's plumbing is skipped)
local Pix2PixModel = ported.class("Pix2PixModel")
function Pix2PixModel:__init__(opt)
    -- BaseModel.__init__(self, opt): the fields pix2pix reads
    self.opt = opt
    self.isTrain = opt.isTrain
    self.device = tide.device("cpu")
    self.loss_names = { "G_GAN", "G_L1", "D_real", "D_fake" }
    self.visual_names = { "real_A", "fake_B", "real_B" }
    if self.isTrain then
        self.model_names = { "G", "D" }
    else -- during test time, only load Gs
        self.model_names = { "G" }
    end
    -- self.netG = networks.define_G(opt.input_nc, opt.output_nc, opt.ngf, opt.netG, opt.norm,
    --                               not opt.no_dropout, opt.init_type, opt.init_gain, self.gpu_ids)
    self.netG = define_G(opt.input_nc, opt.output_nc, opt.ngf, opt.netG, opt.norm,
        not opt.no_dropout, opt.init_type, opt.init_gain)

    if self.isTrain then
        -- self.netD = networks.define_D(opt.input_nc + opt.output_nc, opt.ndf, opt.netD,
        --                               opt.n_layers_D, opt.norm, opt.init_type, opt.init_gain, self.gpu_ids)
        self.netD = define_D(opt.input_nc + opt.output_nc, opt.ndf, opt.netD,
            opt.n_layers_D, opt.norm, opt.init_type, opt.init_gain)
    end

    if self.isTrain then
        -- self.criterionGAN = networks.GANLoss(opt.gan_mode).to(self.device)
        self.criterionGAN = GANLoss(opt.gan_mode):to(self.device)
        self.criterionL1 = nn.L1Loss()
        -- self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
        self.optimizer_G = optim.Adam(self.netG:parameters(),
            { lr = opt.lr, betas = { opt.beta1, 0.999 } })
        self.optimizer_D = optim.Adam(self.netD:parameters(),
            { lr = opt.lr, betas = { opt.beta1, 0.999 } })
        self.optimizers = { self.optimizer_G, self.optimizer_D }
    end
end

-- BaseModel.set_requires_grad(self, nets, requires_grad=False):
function Pix2PixModel:set_requires_grad(nets, requires_grad)
    -- if not isinstance(nets, list): nets = [nets]
    if not (type(nets) == "table" and nets[1] ~= nil) then
        nets = { nets }
    end
    for _, net in ipairs(nets) do
        if net ~= nil then
            for _, param in ipairs(net:parameters()) do
                param.requires_grad = requires_grad or false
            end
        end
    end
end

function Pix2PixModel:set_input(input)
    -- AtoB = self.opt.direction == 'AtoB'
    local AtoB = self.opt.direction == "AtoB"
    -- self.real_A = input['A' if AtoB else 'B'].to(self.device)
    self.real_A = input[AtoB and "A" or "B"]:to(self.device)
    self.real_B = input[AtoB and "B" or "A"]:to(self.device)
    self.image_paths = input[AtoB and "A_paths" or "B_paths"]
end

function Pix2PixModel:forward()
    self.fake_B = self.netG(self.real_A) -- G(A)
end

function Pix2PixModel:backward_D()
    -- Fake; stop backprop to the generator by detaching fake_B
    -- fake_AB = torch.cat((self.real_A, self.fake_B), 1)
    local fake_AB = tide.cat({ self.real_A, self.fake_B }, 2)
    local pred_fake = self.netD(fake_AB:detach())
    self.loss_D_fake = self.criterionGAN(pred_fake, false)
    -- Real
    local real_AB = tide.cat({ self.real_A, self.real_B }, 2)
    local pred_real = self.netD(real_AB)
    self.loss_D_real = self.criterionGAN(pred_real, true)
    -- combine loss and calculate gradients
    self.loss_D = (self.loss_D_fake + self.loss_D_real) * 0.5
    self.loss_D:backward()
end

function Pix2PixModel:backward_G()
    -- First, G(A) should fake the discriminator
    local fake_AB = tide.cat({ self.real_A, self.fake_B }, 2)
    local pred_fake = self.netD(fake_AB)
    self.loss_G_GAN = self.criterionGAN(pred_fake, true)
    -- Second, G(A) = B
    self.loss_G_L1 = self.criterionL1(self.fake_B, self.real_B) * self.opt.lambda_L1
    -- combine loss and calculate gradients
    self.loss_G = self.loss_G_GAN + self.loss_G_L1
    self.loss_G:backward()
end

function Pix2PixModel:optimize_parameters()
    self:forward() -- compute fake images: G(A)
    -- update D
    self:set_requires_grad(self.netD, true) -- enable backprop for D
    self.optimizer_D:zero_grad() -- set D's gradients to zero
    self:backward_D() -- calculate gradients for D
    self.optimizer_D:step() -- update D's weights
    -- update G
    self:set_requires_grad(self.netD, false) -- D requires no gradients when optimizing G
    self.optimizer_G:zero_grad() -- set G's gradients to zero
    self:backward_G() -- calculate graidents for G
    self.optimizer_G:step() -- udpate G's weights
end

-- BaseModel.get_current_losses: OrderedDict of float(getattr(self, 'loss_' + name))
function Pix2PixModel:get_current_losses()
    local errors_ret = {}
    for _, name in ipairs(self.loss_names) do
        errors_ret[name] = self["loss_" .. name]:item()
    end
    return errors_ret
end

---------------------------------------------------------------------------------------------
describe("timm models/resnet.py", function()
    it("get_padding, create_aa(None), drop_blocks(0), SEModule's make_divisible", function()
        -- get_padding(3, 1), (7, 2), (1, 1), (3, 2, 2), (1, 2) in Python: 1 3 0 2 0
        assert.are.same({ 1, 3, 0, 2, 0 }, { get_padding(3, 1), get_padding(7, 2), get_padding(1, 1),
            get_padding(3, 2, 2), get_padding(1, 2) })
        assert.are.equal("Identity", create_aa(nil, { channels = 4, stride = 2 }).__class__.__name__)
        assert.is_nil(create_aa(nil, { noop = false }))
        local dbs = drop_blocks(0.)
        assert.are.equal(4, dbs.n)
        assert.is_nil(dbs[3])
        -- SEModule(8).fc1 has make_divisible(8 / 16, 8, round_limit=0.) = 8 channels
        assert.are.same({ 8, 8, 1, 1 }, dims(SEModule(8).fc1.weight))
        assert.are.same({ 8, 100, 1, 1 }, dims(SEModule(100).fc1.weight))
    end)

    it("BasicBlock and Bottleneck (SE, downsample_conv, downsample_avg) as PyTorch computes them", function()
        -- det(BasicBlock(4, 4))(inp(2, 4, 8, 8)) in PyTorch 1.13
        check(det(BasicBlock(4, 4))(inp(2, 4, 8, 8)), { 144.69573974609375, 0.0,
            0.004010215401649475, 0.07258987426757812, 0.18220998346805573, 0.0 }, "BasicBlock")
        -- BasicBlock(4, 8, 2, downsample_conv(in_channels=4, out_channels=8, kernel_size=1, stride=2), attn_layer=SEModule)
        local b2 = BasicBlock(4, 8, 2, downsample_conv({ in_channels = 4, out_channels = 8,
            kernel_size = 1, stride = 2 }), { attn_layer = SEModule })
        assert.are.same({ 1, 1 }, b2.downsample[1].kernel_size)
        check(det(b2)(inp(2, 4, 8, 8)), { 27.174047470092773, 0.24781012535095215,
            0.24545012414455414, 0.30217885971069336, 0.3757261633872986, 0.0 }, "BasicBlock+SE")
        -- Bottleneck(8, 2, 2, downsample_avg(in_channels=8, out_channels=8, kernel_size=1, stride=2), attn_layer=SEModule)
        local b3 = Bottleneck(8, 2, 2, downsample_avg({ in_channels = 8, out_channels = 8,
            kernel_size = 1, stride = 2 }), { attn_layer = SEModule })
        local y3 = det(b3)(inp(2, 8, 7, 7))
        -- the ceil_mode avg pool takes 7x7 to 4x4, as the stride-2 3x3 conv
        assert.are.same({ 2, 8, 4, 4 }, dims(y3))
        check(y3, { 34.97438049316406, 0.0, 0.0, 0.0, 0.0, 0.7120382785797119 }, "Bottleneck+SE")
        -- zero_init_last: the residual branch adds 0, the block is act(shortcut)
        local b1 = BasicBlock(4, 4)
        b1:zero_init_last()
        local x = inp(2, 4, 8, 8)
        assert.is_true((b1(x) - x:relu()):abs():max():item() < 1e-6)
        assert.has_error(function() BasicBlock(4, 4, { cardinality = 2 }) end)
    end)

    it("ResNet [1,1,1,1]: BasicBlock with the 7x7 stem, Bottleneck with the deep stem", function()
        local m4 = ResNet(BasicBlock, { 1, 1, 1, 1 }, { num_classes = 5, channels = { 4, 4, 8, 8 } })
        -- init_weights: kaiming fan_out convs, each block's bn2 zeroed, the stem's bn1 untouched
        local w = m4.layer1[1].conv1.weight
        local std = math.sqrt(2 / (4 * 3 * 3))
        assert.is_true(math.abs(w:std():item() - std) < 0.5 * std)
        for _, l in ipairs({ m4.layer1, m4.layer2, m4.layer3, m4.layer4 }) do
            assert.are.equal(0, l[1].bn2.weight:abs():sum():item())
        end
        assert.are.equal(64, m4.bn1.weight:sum():item())
        -- feature_info as PyTorch prints it
        local fi = {}
        for _, f in ipairs(m4.feature_info) do fi[#fi + 1] = { f.num_chs, f.reduction, f.module } end
        assert.are.same({ { 64, 2, "act1" }, { 4, 4, "layer1" }, { 4, 8, "layer2" },
            { 8, 16, "layer3" }, { 8, 32, "layer4" } }, fi)
        check(det(m4)(inp(2, 3, 16, 16)), { -2.7176334857940674, -0.22704075276851654,
            -0.28258660435676575, -0.29988566040992737, -0.2765966057777405, -0.3302287459373474 },
            "ResNet BasicBlock")

        -- ResNet(Bottleneck, [1,1,1,1], num_classes=5, stem_width=4, stem_type='deep', avg_down=True,
        --        channels=(2, 2, 2, 2), block_args=dict(attn_layer=SEModule))
        local m5 = det(ResNet(Bottleneck, { 1, 1, 1, 1 }, { num_classes = 5, stem_width = 4,
            stem_type = "deep", avg_down = true, channels = { 2, 2, 2, 2 },
            block_args = { attn_layer = SEModule } }))
        assert.are.equal(7, #m5.conv1)
        assert.are.equal("AvgPool2d", m5.layer2[1].downsample[1].__class__.__name__)
        assert.are.equal(8, m5.num_features)
        local x5 = inp(2, 3, 16, 16)
        check(m5(x5), { -2.4153265953063965, -0.015735715627670288, -0.37130510807037354,
            -0.1857050359249115, -0.3755839467048645, -0.26848238706588745 }, "ResNet Bottleneck")
        local feat = m5:forward_features(x5)
        assert.are.same({ 2, 8, 1, 1 }, dims(feat))
        check(feat, { 0.7220159769058228, 0.0, 0.0, 0.0, 0.0, 0.0 }, "forward_features")
        local pre = m5:forward_head(feat, { pre_logits = true })
        assert.are.same({ 2, 8 }, dims(pre))
        -- opt = torch.optim.SGD(m5.parameters(), lr=0.05, momentum=0.9); 3 steps of cross_entropy
        local opt = optim.SGD(m5:parameters(), { lr = 0.05, momentum = 0.9 })
        local tgt = tide.tensor({ 2, 4 }) -- PyTorch's [1, 3]
        local ls = {}
        for step = 1, 3 do
            opt:zero_grad()
            local loss = F.cross_entropy(m5(x5), tgt)
            loss:backward()
            opt:step()
            ls[step] = loss:item()
        end
        assert_close_list({ 1.710197925567627, 1.6878182888031006, 1.6490073204040527 }, ls, 1e-4,
            "SGD losses")
    end)

    it("drop_path_rate's DropPath per block, drop_rate, and a SGD training step", function()
        tide.manual_seed(5)
        local m = ResNet(BasicBlock, { 1, 1, 1, 1 }, { num_classes = 3, channels = { 4, 4, 8, 8 },
            drop_path_rate = 0.3, drop_rate = 0.2, stem_type = "deep", stem_width = 4 })
        -- block_dpr = drop_path_rate * net_block_idx / (net_num_blocks - 1): 0, 0.1, 0.2, 0.3
        assert.is_nil(m.layer1[1].drop_path)
        assert.is_true(math.abs(m.layer2[1].drop_path.drop_prob - 0.1) < 1e-12)
        assert.is_true(math.abs(m.layer4[1].drop_path.drop_prob - 0.3) < 1e-12)
        local x, y = tide.randn(4, 3, 16, 16), tide.tensor({ 1, 2, 3, 1 })
        local opt = optim.SGD(m:parameters(), { lr = 0.05, momentum = 0.9 })
        local ls = {}
        for step = 1, 3 do
            opt:zero_grad()
            local loss = F.cross_entropy(m(x), y)
            loss:backward()
            opt:step()
            ls[step] = loss:item()
            assert_finite(ls[step])
        end
        assert.is_true(ls[3] < ls[1])
        -- eval: DropPath and the head's dropout pass through, the forward repeats
        m:eval()
        assert.is_true((m(x) - m(x)):abs():max():item() == 0)
    end)
end)

describe("pytorch-CycleGAN-and-pix2pix models/pix2pix_model.py", function()
    local function opt_for(gan_mode, direction)
        return { isTrain = true, input_nc = 3, output_nc = 3, ngf = 2, ndf = 4, netG = "unet_32",
            netD = "n_layers", n_layers_D = 2, norm = "batch", no_dropout = true,
            init_type = "normal", init_gain = 0.02, gan_mode = gan_mode, lr = 0.01, beta1 = 0.5,
            lambda_L1 = 100.0, direction = direction or "AtoB" }
    end
    local A = inp(2, 3, 32, 32)
    -- (torch.arange(2*3*32*32, dtype=torch.float32)*0.07).cos().reshape(2, 3, 32, 32)
    local B = (tide.arange(2 * 3 * 32 * 32, { dtype = "float32" }) * 0.07):cos():reshape(2, 3, 32, 32)
    -- PyTorch 1.13's loss_D_fake, loss_D_real, loss_G_GAN, loss_G_L1 over two steps (det weights)
    local want = {
        vanilla = { 0.5912257432937622, 0.9301607608795166, 0.7514872550964355, 80.36260223388672,
            0.67959064245224, 0.6764974594116211, 0.8109571933746338, 77.59618377685547 },
        lsgan = { 0.5440112352371216, 2.236037492752075, 0.8873469233512878, 80.36260223388672,
            0.24046561121940613, 0.854315996170044, 0.5903562903404236, 77.59224700927734 },
    }

    for _, gan_mode in ipairs({ "vanilla", "lsgan" }) do
        it("optimize_parameters with GANLoss('" .. gan_mode .. "') + L1 as PyTorch", function()
            tide.manual_seed(6)
            local model = Pix2PixModel(opt_for(gan_mode))
            det(model.netG)
            det(model.netD)
            -- the Adam state is empty: the optimizers hold the same parameters det filled in
            model:set_input({ A = A, B = B, A_paths = { "a.png" }, B_paths = { "b.png" } })
            assert.are.same({ "a.png" }, model.image_paths)
            local got = {}
            for _ = 1, 2 do
                model:optimize_parameters()
                local l = model:get_current_losses()
                extend(got, { l.D_fake, l.D_real, l.G_GAN, l.G_L1 })
            end
            assert_close_list(want[gan_mode], got, 2e-4, gan_mode .. " losses")
            assert.are.same({ 2, 3, 32, 32 }, dims(model.fake_B))
            -- D is frozen after the G update, G's gradients are there
            assert.is_false(model.netD:parameters()[1].requires_grad)
            assert_finite(model.netG:parameters()[1].grad:abs():sum():item())
        end)
    end

    it("BtoA, dropout and init_net's normal init: L1 falls over 2 steps", function()
        tide.manual_seed(7)
        local opt = opt_for("vanilla", "BtoA")
        opt.no_dropout = false
        local model = Pix2PixModel(opt)
        -- init_weights('normal', 0.02): conv weights N(0, 0.02), BatchNorm weights N(1, 0.02)
        assert.is_true(model.netD.model[1].weight:std():item() < 0.05)
        assert.are.equal(0, model.netD.model[1].bias:abs():sum():item())
        assert.is_true((model.netD.model[4].weight - 1):abs():max():item() < 0.2)
        model:set_input({ A = A, B = B, A_paths = { "a" }, B_paths = { "b" } })
        assert.are.equal(B, model.real_A)
        assert.are.same({ "b" }, model.image_paths)
        local l1s = {}
        for step = 1, 2 do
            model:optimize_parameters()
            local l = model:get_current_losses()
            for _, k in ipairs(model.loss_names) do assert_finite(l[k], k) end
            l1s[step] = l.G_L1
        end
        assert.is_true(l1s[2] < l1s[1])
        -- the test-time model builds G only
        local t = Pix2PixModel(dict(opt, { isTrain = false }))
        assert.are.same({ "G" }, t.model_names)
        assert.is_nil(t.netD)
        assert.has_error(function() define_G(3, 3, 2, "unet_64", "batch", false) end,
            "Generator model name [unet_64] is not recognized")
    end)
end)
