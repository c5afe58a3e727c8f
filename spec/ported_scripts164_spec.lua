-- ported_scripts164_spec.lua — NVlabs/stylegan2-ada-pytorch's reference ops and layers:
-- torch_utils/ops/upfirdn2d.py (_parse_scaling, _parse_padding, _get_filter_size, setup_filter,
-- _upfirdn2d_ref, filter2d / upsample2d / downsample2d), torch_utils/ops/bias_act.py
-- (activation_funcs, _bias_act_ref), torch_utils/ops/fma.py, torch_utils/ops/conv2d_resample.py
-- (_conv2d_wrapper, conv2d_resample) and training/networks.py (normalize_2nd_moment,
-- modulated_conv2d, FullyConnectedLayer, Conv2dLayer, MappingNetwork, SynthesisLayer), ported
-- line for line at tiny sizes. The Python line stands above each Lua line that differs from it.
-- Only the impl='ref' paths: the custom CUDA plug-ins (upfirdn2d / bias_act .cu) are not ported,
-- and conv2d_gradfix is plain F.conv2d / F.conv_transpose2d. Inputs and weights are fixed
-- formulas (det below); the values are PyTorch 1.13's on the same formulas.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local close = ported.close
-- Python's a // b (Lua 5.1 and LuaJIT have no //)
local floor = math.floor

-- det(shape, a, b, fn): fn(a * arange(n) + b) in float64, as float32, of that shape
local function det(shape, a, b, fn)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local t = tide.arange(0, n, { dtype = "float64" }) * (a or 0.37) + (b or 0.1)
    t = (fn == "cos") and t:cos() or t:sin()
    return t:float():reshape(shape)
end

-- PyTorch's sum and its sum weighted by det(shape, 0.71, 0.3, cos), and the shape
local function check(want, t, what)
    local shape = {}
    for i = 1, t.ndim do shape[i] = t:size(i) end
    assert.same(want.shape, shape, what)
    local w = det(want.shape, 0.71, 0.3, "cos")
    local s, ws = t:sum():item(), (t * w):sum():item()
    assert(close(s, want.s, 2e-4), string.format("%s sum %.7g, PyTorch %.7g", what, s, want.s))
    assert(close(ws, want.ws, 2e-4), string.format("%s wsum %.7g, PyTorch %.7g", what, ws, want.ws))
end

-- the values of /tmp/kw/sg/gen.py (the ref functions pasted, run in PyTorch 1.13)
local REF = {
    filt = { shape = {4,4}, s = 1, ws = 0.002210937 },
    filt_flip_gain = { shape = {3,3}, s = 2, ws = 0.3581144 },
    filt_sep = { shape = {8}, s = 1, ws = -0.2178302 },
    up2 = { shape = {2,2,8,8}, s = 15.43499, ws = 1.333187 },
    down2 = { shape = {2,2,2,2}, s = 1.231915, ws = 0.2841887 },
    pad = { shape = {2,2,2,6}, s = 163.0087, ws = 4.52303 },
    pad_flip = { shape = {2,2,2,6}, s = 481.2027, ws = -16.61277 },
    updown = { shape = {2,2,4,2}, s = 0.8801846, ws = 0.3568582 },
    filt2d = { shape = {2,2,6,6}, s = 28.80387, ws = -75.4517 },
    act_linear = { shape = {2,3,5}, s = 7.569275, ws = 1.578571 },
    act_relu = { shape = {2,3,5}, s = 15.22028, ws = 0.9579725 },
    act_lrelu = { shape = {2,3,5}, s = 12.69219, ws = 1.125967 },
    act_tanh = { shape = {2,3,5}, s = 7.734231, ws = 1.383188 },
    act_sigmoid = { shape = {2,3,5}, s = 18.58987, ws = 1.06315 },
    act_elu = { shape = {2,3,5}, s = 9.362461, ws = 1.392393 },
    act_selu = { shape = {2,3,5}, s = 7.072168, ws = 1.241317 },
    act_softplus = { shape = {2,3,5}, s = 20.97035, ws = 1.124187 },
    act_swish = { shape = {2,3,5}, s = 11.58028, ws = 1.291628 },
    act_lrelu_alpha = { shape = {2,3,5}, s = 43.14142, ws = 3.14081 },
    act_swish_dim2 = { shape = {2,3,5}, s = 29.2244, ws = 2.692339 },
    mod_True = { shape = {2,4,5,5}, s = 2.667464, ws = 3.050335 },
    mod_True_gst = { shape = {2,3}, s = 7.478617, ws = -16.40726 },
    mod_nodemod_True = { shape = {2,4,5,5}, s = 5.35566, ws = 7.999226 },
    mod_up_True = { shape = {2,4,10,10}, s = -0.1152937, ws = 80.48817 },
    mod_False = { shape = {2,4,5,5}, s = 2.667462, ws = 3.050336 },
    mod_False_gst = { shape = {2,3}, s = 7.478615, ws = -16.40726 },
    mod_nodemod_False = { shape = {2,4,5,5}, s = 5.355654, ws = 7.999229 },
    mod_up_False = { shape = {2,4,10,10}, s = -0.1152907, ws = 80.48816 },
    fc = { shape = {2,4}, s = 2.602195, ws = -0.4870352 },
    fc_lin = { shape = {2,4}, s = 2.026824, ws = -0.4906635 },
    conv_1_1 = { shape = {2,2,5,5}, s = 26.21147, ws = -7.381033 },
    conv_2_1 = { shape = {2,2,10,10}, s = 98.19883, ws = 1.38804 },
    conv_1_2 = { shape = {2,2,2,2}, s = 2.301729, ws = 0.6236772 },
    map_ws = { shape = {2,3,4}, s = 10.95448, ws = 0.3604307 },
    map_wavg = { shape = {4}, s = 0.3468918, ws = 0.1887188 },
    map_trunc = { shape = {2,3,4}, s = 8.292538, ws = 0.2486504 },
    map_cut = { shape = {2,3,4}, s = 7.996768, ws = 0.542562 },
    map_wavg2 = { shape = {4}, s = 0.3468918, ws = 0.1887188 },
    syn_fused = { shape = {2,4,5,5}, s = 53.75998, ws = -4.680585 },
    syn_unfused = { shape = {2,4,5,5}, s = 53.75999, ws = -4.680585 },
    syn_none = { shape = {2,4,5,5}, s = 48.24969, ws = -1.299369 },
}

---------------------------------------------------------------------------------------------
-- 1. torch_utils/ops/upfirdn2d.py
---------------------------------------------------------------------------------------------
local function _parse_scaling(scaling)
    -- if isinstance(scaling, int):
    if type(scaling) == "number" then
        scaling = { scaling, scaling }
    end
    assert(type(scaling) == "table")
    for _, x in ipairs(scaling) do assert(x % 1 == 0) end
    local sx, sy = scaling[1], scaling[2]
    assert(sx >= 1 and sy >= 1)
    return sx, sy
end

local function _parse_padding(padding)
    if type(padding) == "number" then
        padding = { padding, padding }
    end
    assert(type(padding) == "table")
    if #padding == 2 then
        local padx, pady = padding[1], padding[2]
        padding = { padx, padx, pady, pady }
    end
    return padding[1], padding[2], padding[3], padding[4]
end

local function _get_filter_size(f)
    if f == nil then
        return 1, 1
    end
    -- assert isinstance(f, torch.Tensor) and f.ndim in [1, 2]
    assert(tide.is_tensor(f) and (f.ndim == 1 or f.ndim == 2))
    -- fw = f.shape[-1]; fh = f.shape[0]
    local fw, fh = f:size(-1), f:size(1)
    assert(fw >= 1 and fh >= 1)
    return fw, fh
end

-- def setup_filter(f, device=torch.device('cpu'), normalize=True, flip_filter=False, gain=1,
--                  separable=None):
local function setup_filter(f, opts)
    opts = opts or {}
    local normalize = opts.normalize ~= false
    local flip_filter, gain, separable = opts.flip_filter, opts.gain or 1, opts.separable
    if f == nil then
        f = 1
    end
    -- f = torch.as_tensor(f, dtype=torch.float32)
    f = tide.as_tensor(f, { dtype = "float32" })
    assert(f.ndim <= 2)
    assert(f:numel() > 0)
    if f.ndim == 0 then
        -- f = f[np.newaxis]
        f = f:unsqueeze(1)
    end
    if separable == nil then
        separable = (f.ndim == 1 and f:numel() >= 8)
    end
    if f.ndim == 1 and not separable then
        f = f:ger(f)
    end
    assert(f.ndim == (separable and 1 or 2))
    if normalize then
        -- f /= f.sum()
        f:div_(f:sum())
    end
    if flip_filter then
        -- f = f.flip(list(range(f.ndim)))
        f = f:flip(f.ndim == 1 and { 1 } or { 1, 2 })
    end
    f = f * (gain ^ (f.ndim / 2))
    return f
end

-- def _upfirdn2d_ref(x, f, up=1, down=1, padding=0, flip_filter=False, gain=1):
local function _upfirdn2d_ref(x, f, opts)
    opts = opts or {}
    local up, down, padding = opts.up or 1, opts.down or 1, opts.padding or 0
    local flip_filter, gain = opts.flip_filter, opts.gain or 1
    -- Validate arguments.
    assert(tide.is_tensor(x) and x.ndim == 4)
    if f == nil then
        f = tide.ones({ 1, 1 }, { dtype = "float32", device = x.device })
    end
    assert(tide.is_tensor(f) and (f.ndim == 1 or f.ndim == 2))
    assert(f.dtype == "float32" and not f.requires_grad)
    -- batch_size, num_channels, in_height, in_width = x.shape
    local batch_size, num_channels, in_height, in_width = x:size(1), x:size(2), x:size(3), x:size(4)
    local upx, upy = _parse_scaling(up)
    local downx, downy = _parse_scaling(down)
    local padx0, padx1, pady0, pady1 = _parse_padding(padding)

    -- Upsample by inserting zeros.
    x = x:reshape({ batch_size, num_channels, in_height, 1, in_width, 1 })
    -- x = torch.nn.functional.pad(x, [0, upx - 1, 0, 0, 0, upy - 1])
    x = F.pad(x, { 0, upx - 1, 0, 0, 0, upy - 1 })
    x = x:reshape({ batch_size, num_channels, in_height * upy, in_width * upx })

    -- Pad or crop.
    -- x = torch.nn.functional.pad(x, [max(padx0, 0), max(padx1, 0), max(pady0, 0), max(pady1, 0)])
    x = F.pad(x, { math.max(padx0, 0), math.max(padx1, 0), math.max(pady0, 0), math.max(pady1, 0) })
    -- x = x[:, :, max(-pady0, 0) : x.shape[2] - max(-pady1, 0),
    --       max(-padx0, 0) : x.shape[3] - max(-padx1, 0)]
    x = x[{ {}, {}, { math.max(-pady0, 0) + 1, x:size(3) - math.max(-pady1, 0) },
        { math.max(-padx0, 0) + 1, x:size(4) - math.max(-padx1, 0) } }]

    -- Setup filter.
    f = f * (gain ^ (f.ndim / 2))
    f = f:to(x.dtype)
    if not flip_filter then
        f = f:flip(f.ndim == 1 and { 1 } or { 1, 2 })
    end

    -- Convolve with the filter.
    -- f = f[np.newaxis, np.newaxis].repeat([num_channels, 1] + [1] * f.ndim)
    local f2 = f[{ tide.newaxis, tide.newaxis }]
    f = f2["repeat"](f2, f.ndim == 1 and { num_channels, 1, 1 } or { num_channels, 1, 1, 1 })
    if f.ndim == 4 then
        -- x = conv2d_gradfix.conv2d(input=x, weight=f, groups=num_channels)
        x = F.conv2d(x, f, nil, { groups = num_channels })
    else
        x = F.conv2d(x, f:unsqueeze(3), nil, { groups = num_channels })
        x = F.conv2d(x, f:unsqueeze(4), nil, { groups = num_channels })
    end

    -- Downsample by throwing away pixels.
    -- x = x[:, :, ::downy, ::downx]
    x = x[{ {}, {}, { 1, -1, downy }, { 1, -1, downx } }]
    return x
end

-- def upfirdn2d(x, f, up=1, down=1, padding=0, flip_filter=False, gain=1, impl='cuda'):
local function upfirdn2d(x, f, opts)
    -- impl 'cuda' (the plug-in) is not ported: every impl is 'ref'
    return _upfirdn2d_ref(x, f, opts)
end

-- def filter2d(x, f, padding=0, flip_filter=False, gain=1, impl='cuda'):
local function filter2d(x, f, opts)
    opts = opts or {}
    local padx0, padx1, pady0, pady1 = _parse_padding(opts.padding or 0)
    local fw, fh = _get_filter_size(f)
    local p = {
        padx0 + floor(fw / 2),
        padx1 + floor((fw - 1) / 2),
        pady0 + floor(fh / 2),
        pady1 + floor((fh - 1) / 2),
    }
    return upfirdn2d(x, f, { padding = p, flip_filter = opts.flip_filter, gain = opts.gain })
end

-- def upsample2d(x, f, up=2, padding=0, flip_filter=False, gain=1, impl='cuda'):
local function upsample2d(x, f, opts)
    opts = opts or {}
    local up, gain = opts.up or 2, opts.gain or 1
    local upx, upy = _parse_scaling(up)
    local padx0, padx1, pady0, pady1 = _parse_padding(opts.padding or 0)
    local fw, fh = _get_filter_size(f)
    local p = {
        padx0 + floor((fw + upx - 1) / 2),
        padx1 + floor((fw - upx) / 2),
        pady0 + floor((fh + upy - 1) / 2),
        pady1 + floor((fh - upy) / 2),
    }
    return upfirdn2d(x, f, { up = up, padding = p, flip_filter = opts.flip_filter,
        gain = gain * upx * upy })
end

-- def downsample2d(x, f, down=2, padding=0, flip_filter=False, gain=1, impl='cuda'):
local function downsample2d(x, f, opts)
    opts = opts or {}
    local down = opts.down or 2
    local downx, downy = _parse_scaling(down)
    local padx0, padx1, pady0, pady1 = _parse_padding(opts.padding or 0)
    local fw, fh = _get_filter_size(f)
    local p = {
        padx0 + floor((fw - downx + 1) / 2),
        padx1 + floor((fw - downx) / 2),
        pady0 + floor((fh - downy + 1) / 2),
        pady1 + floor((fh - downy) / 2),
    }
    return upfirdn2d(x, f, { down = down, padding = p, flip_filter = opts.flip_filter,
        gain = opts.gain })
end

---------------------------------------------------------------------------------------------
-- 2. torch_utils/ops/bias_act.py, fma.py
---------------------------------------------------------------------------------------------
-- activation_funcs = { 'linear': dnnlib.EasyDict(func=lambda x, **_: x, def_alpha=0, ...
-- (cuda_idx, ref and has_2nd_grad serve the plug-in only)
local activation_funcs = {
    linear = { func = function(x) return x end, def_alpha = 0, def_gain = 1 },
    relu = { func = function(x) return F.relu(x) end, def_alpha = 0, def_gain = math.sqrt(2) },
    lrelu = { func = function(x, alpha) return F.leaky_relu(x, alpha) end, def_alpha = 0.2,
        def_gain = math.sqrt(2) },
    tanh = { func = function(x) return tide.tanh(x) end, def_alpha = 0, def_gain = 1 },
    sigmoid = { func = function(x) return tide.sigmoid(x) end, def_alpha = 0, def_gain = 1 },
    elu = { func = function(x) return F.elu(x) end, def_alpha = 0, def_gain = 1 },
    selu = { func = function(x) return F.selu(x) end, def_alpha = 0, def_gain = 1 },
    softplus = { func = function(x) return F.softplus(x) end, def_alpha = 0, def_gain = 1 },
    swish = { func = function(x) return tide.sigmoid(x) * x end, def_alpha = 0,
        def_gain = math.sqrt(2) },
}
local ACTS = { "linear", "relu", "lrelu", "tanh", "sigmoid", "elu", "selu", "softplus", "swish" }

-- def _bias_act_ref(x, b=None, dim=1, act='linear', alpha=None, gain=None, clamp=None):
-- (dim 1-based: PyTorch's dim=1 is 2)
local function _bias_act_ref(x, b, opts)
    opts = opts or {}
    local dim, act = opts.dim or 2, opts.act or "linear"
    local alpha, gain, clamp = opts.alpha, opts.gain, opts.clamp
    assert(tide.is_tensor(x))
    assert(clamp == nil or clamp >= 0)
    local spec = activation_funcs[act]
    -- alpha = float(alpha if alpha is not None else spec.def_alpha)
    alpha = alpha or spec.def_alpha
    gain = gain or spec.def_gain
    clamp = clamp or -1

    -- Add bias.
    if b ~= nil then
        assert(tide.is_tensor(b) and b.ndim == 1)
        assert(1 <= dim and dim <= x.ndim)
        assert(b:size(1) == x:size(dim))
        -- x = x + b.reshape([-1 if i == dim else 1 for i in range(x.ndim)])
        local shape = {}
        for i = 1, x.ndim do shape[i] = (i == dim) and -1 or 1 end
        x = x + b:reshape(shape)
    end

    -- Evaluate activation function.
    x = spec.func(x, alpha)

    -- Scale by gain.
    if gain ~= 1 then
        x = x * gain
    end

    -- Clamp.
    if clamp >= 0 then
        x = x:clamp(-clamp, clamp)
    end
    return x
end

-- def bias_act(x, b=None, dim=1, act='linear', alpha=None, gain=None, clamp=None, impl='cuda'):
local function bias_act(x, b, opts)
    -- impl 'cuda' (the plug-in) is not ported: every impl is 'ref'
    return _bias_act_ref(x, b, opts)
end

-- def _unbroadcast(x, shape):
local function _unbroadcast(x, shape)
    local extra_dims = x.ndim - #shape
    assert(extra_dims >= 0)
    -- dim = [i for i in range(x.ndim) if x.shape[i] > 1 and (i < extra_dims or
    --        shape[i - extra_dims] == 1)]
    local dim = {}
    for i = 1, x.ndim do
        if x:size(i) > 1 and (i <= extra_dims or shape[i - extra_dims] == 1) then
            dim[#dim + 1] = i
        end
    end
    if #dim > 0 then
        x = x:sum(dim, true)
    end
    if extra_dims > 0 then
        -- x = x.reshape(-1, *x.shape[extra_dims+1:])
        local rest = { -1 }
        for i = extra_dims + 2, x.ndim do rest[#rest + 1] = x:size(i) end
        x = x:reshape(rest)
    end
    return x
end

-- class _FusedMultiplyAdd(torch.autograd.Function): # a * b + c
local FusedMultiplyAdd = tide.autograd.Function:extend("_FusedMultiplyAdd")
function FusedMultiplyAdd.forward(ctx, a, b, c)
    local out = tide.addcmul(c, a, b)
    ctx:save_for_backward(a, b)
    ctx.c_shape = c.shape
    return out
end
function FusedMultiplyAdd.backward(ctx, dout)
    local a, b = ctx.saved_tensors[1], ctx.saved_tensors[2]
    local c_shape = ctx.c_shape
    local da, db, dc
    if ctx.needs_input_grad[1] then
        da = _unbroadcast(dout * b, a.shape)
    end
    if ctx.needs_input_grad[2] then
        db = _unbroadcast(dout * a, b.shape)
    end
    if ctx.needs_input_grad[3] then
        dc = _unbroadcast(dout, c_shape)
    end
    return da, db, dc
end
-- def fma(a, b, c): # => a * b + c
local function fma(a, b, c)
    return FusedMultiplyAdd.apply(a, b, c)
end

---------------------------------------------------------------------------------------------
-- 3. torch_utils/ops/conv2d_resample.py
---------------------------------------------------------------------------------------------
-- def _conv2d_wrapper(x, w, stride=1, padding=0, groups=1, transpose=False, flip_weight=True):
local function _conv2d_wrapper(x, w, opts)
    local stride, padding, groups = opts.stride or 1, opts.padding or 0, opts.groups or 1
    local flip_weight = opts.flip_weight ~= false
    if not flip_weight then
        w = w:flip({ 3, 4 })
    end
    -- (the cuDNN 8.0.5 channels_last 1x1 workaround is left out: tide has no channels_last)
    -- op = conv2d_gradfix.conv_transpose2d if transpose else conv2d_gradfix.conv2d
    local op = opts.transpose and F.conv_transpose2d or F.conv2d
    return op(x, w, nil, { stride = stride, padding = padding, groups = groups })
end

-- def conv2d_resample(x, w, f=None, up=1, down=1, padding=0, groups=1, flip_weight=True,
--                     flip_filter=False):
local function conv2d_resample(x, w, opts)
    local f, up, down, groups = opts.f, opts.up or 1, opts.down or 1, opts.groups or 1
    local flip_weight, flip_filter = opts.flip_weight ~= false, opts.flip_filter
    assert(tide.is_tensor(x) and x.ndim == 4)
    assert(tide.is_tensor(w) and w.ndim == 4 and w.dtype == x.dtype)
    -- out_channels, in_channels_per_group, kh, kw = _get_weight_shape(w)
    local out_channels, in_channels_per_group, kh, kw = w:size(1), w:size(2), w:size(3), w:size(4)
    local fw, fh = _get_filter_size(f)
    local px0, px1, py0, py1 = _parse_padding(opts.padding or 0)
    if up > 1 then
        px0 = px0 + floor((fw + up - 1) / 2)
        px1 = px1 + floor((fw - up) / 2)
        py0 = py0 + floor((fh + up - 1) / 2)
        py1 = py1 + floor((fh - up) / 2)
    end
    if down > 1 then
        px0 = px0 + floor((fw - down + 1) / 2)
        px1 = px1 + floor((fw - down) / 2)
        py0 = py0 + floor((fh - down + 1) / 2)
        py1 = py1 + floor((fh - down) / 2)
    end
    if kw == 1 and kh == 1 and (down > 1 and up == 1) then
        x = upfirdn2d(x, f, { down = down, padding = { px0, px1, py0, py1 },
            flip_filter = flip_filter })
        return _conv2d_wrapper(x, w, { groups = groups, flip_weight = flip_weight })
    end
    if kw == 1 and kh == 1 and (up > 1 and down == 1) then
        x = _conv2d_wrapper(x, w, { groups = groups, flip_weight = flip_weight })
        return upfirdn2d(x, f, { up = up, padding = { px0, px1, py0, py1 }, gain = up ^ 2,
            flip_filter = flip_filter })
    end
    if down > 1 and up == 1 then
        x = upfirdn2d(x, f, { padding = { px0, px1, py0, py1 }, flip_filter = flip_filter })
        return _conv2d_wrapper(x, w, { stride = down, groups = groups, flip_weight = flip_weight })
    end
    if up > 1 then
        if groups == 1 then
            -- w = w.transpose(0, 1)
            w = w:transpose(1, 2)
        else
            w = w:reshape({ groups, floor(out_channels / groups), in_channels_per_group, kh, kw })
            -- w = w.transpose(1, 2)
            w = w:transpose(2, 3)
            w = w:reshape({ groups * in_channels_per_group, floor(out_channels / groups), kh, kw })
        end
        px0 = px0 - (kw - 1)
        px1 = px1 - (kw - up)
        py0 = py0 - (kh - 1)
        py1 = py1 - (kh - up)
        local pxt = math.max(math.min(-px0, -px1), 0)
        local pyt = math.max(math.min(-py0, -py1), 0)
        x = _conv2d_wrapper(x, w, { stride = up, padding = { pyt, pxt }, groups = groups,
            transpose = true, flip_weight = not flip_weight })
        x = upfirdn2d(x, f, { padding = { px0 + pxt, px1 + pxt, py0 + pyt, py1 + pyt },
            gain = up ^ 2, flip_filter = flip_filter })
        if down > 1 then
            x = upfirdn2d(x, f, { down = down, flip_filter = flip_filter })
        end
        return x
    end
    if up == 1 and down == 1 then
        if px0 == px1 and py0 == py1 and px0 >= 0 and py0 >= 0 then
            return _conv2d_wrapper(x, w, { padding = { py0, px0 }, groups = groups,
                flip_weight = flip_weight })
        end
    end
    x = upfirdn2d(x, up > 1 and f or nil, { up = up, padding = { px0, px1, py0, py1 },
        gain = up ^ 2, flip_filter = flip_filter })
    x = _conv2d_wrapper(x, w, { groups = groups, flip_weight = flip_weight })
    if down > 1 then
        x = upfirdn2d(x, f, { down = down, flip_filter = flip_filter })
    end
    return x
end

---------------------------------------------------------------------------------------------
-- 4. training/networks.py
---------------------------------------------------------------------------------------------
-- def normalize_2nd_moment(x, dim=1, eps=1e-8):  (dim 1-based: PyTorch's dim=1 is 2)
local function normalize_2nd_moment(x, dim, eps)
    dim, eps = dim or 2, eps or 1e-8
    -- return x * (x.square().mean(dim=dim, keepdim=True) + eps).rsqrt()
    return x * (x:square():mean(dim, true) + eps):rsqrt()
end

-- def modulated_conv2d(x, weight, styles, noise=None, up=1, down=1, padding=0,
--     resample_filter=None, demodulate=True, flip_weight=True, fused_modconv=True):
local function modulated_conv2d(x, weight, styles, opts)
    local noise, up, down, padding = opts.noise, opts.up or 1, opts.down or 1, opts.padding or 0
    local resample_filter = opts.resample_filter
    local demodulate, flip_weight = opts.demodulate ~= false, opts.flip_weight ~= false
    local fused_modconv = opts.fused_modconv ~= false
    local batch_size = x:size(1)
    -- out_channels, in_channels, kh, kw = weight.shape
    local in_channels, kh, kw = weight:size(2), weight:size(3), weight:size(4)
    -- (the float16 pre-normalization is left out: these tests run float32)

    -- Calculate per-sample weights and demodulation coefficients.
    local w, dcoefs
    if demodulate or fused_modconv then
        -- w = weight.unsqueeze(0) # [NOIkk]
        w = weight:unsqueeze(1)
        w = w * styles:reshape({ batch_size, 1, -1, 1, 1 })
    end
    if demodulate then
        -- dcoefs = (w.square().sum(dim=[2,3,4]) + 1e-8).rsqrt() # [NO]
        dcoefs = (w:square():sum({ 3, 4, 5 }) + 1e-8):rsqrt()
    end
    if demodulate and fused_modconv then
        w = w * dcoefs:reshape({ batch_size, -1, 1, 1, 1 })
    end

    -- Execute by scaling the activations before and after the convolution.
    if not fused_modconv then
        -- x = x * styles.to(x.dtype).reshape(batch_size, -1, 1, 1)
        x = x * styles:to(x.dtype):reshape({ batch_size, -1, 1, 1 })
        x = conv2d_resample(x, weight:to(x.dtype), { f = resample_filter, up = up, down = down,
            padding = padding, flip_weight = flip_weight })
        if demodulate and noise ~= nil then
            x = fma(x, dcoefs:to(x.dtype):reshape({ batch_size, -1, 1, 1 }), noise:to(x.dtype))
        elseif demodulate then
            x = x * dcoefs:to(x.dtype):reshape({ batch_size, -1, 1, 1 })
        elseif noise ~= nil then
            x = x:add_(noise:to(x.dtype))
        end
        return x
    end

    -- Execute as one fused op using grouped convolution.
    -- x = x.reshape(1, -1, *x.shape[2:])
    x = x:reshape({ 1, -1, x:size(3), x:size(4) })
    w = w:reshape({ -1, in_channels, kh, kw })
    x = conv2d_resample(x, w:to(x.dtype), { f = resample_filter, up = up, down = down,
        padding = padding, groups = batch_size, flip_weight = flip_weight })
    -- x = x.reshape(batch_size, -1, *x.shape[2:])
    x = x:reshape({ batch_size, -1, x:size(3), x:size(4) })
    if noise ~= nil then
        x = x:add_(noise)
    end
    return x
end

-- class FullyConnectedLayer(torch.nn.Module):
local FullyConnectedLayer = nn.Module:extend("FullyConnectedLayer")
-- def __init__(self, in_features, out_features, bias=True, activation='linear',
--              lr_multiplier=1, bias_init=0):
function FullyConnectedLayer:init(in_features, out_features, opts)
    opts = opts or {}
    local lr_multiplier = opts.lr_multiplier or 1
    self.activation = opts.activation or "linear"
    -- self.weight = torch.nn.Parameter(torch.randn([out_features, in_features]) / lr_multiplier)
    self.weight = nn.Parameter(tide.randn({ out_features, in_features }) / lr_multiplier)
    if opts.bias ~= false then
        -- torch.nn.Parameter(torch.full([out_features], np.float32(bias_init)))
        self.bias = nn.Parameter(tide.full({ out_features }, opts.bias_init or 0,
            { dtype = "float32" }))
    end
    self.weight_gain = lr_multiplier / math.sqrt(in_features)
    self.bias_gain = lr_multiplier
end

function FullyConnectedLayer:forward(x)
    local w = self.weight:to(x.dtype) * self.weight_gain
    local b = self.bias
    if b ~= nil then
        b = b:to(x.dtype)
        if self.bias_gain ~= 1 then
            b = b * self.bias_gain
        end
    end

    if self.activation == "linear" and b ~= nil then
        -- x = torch.addmm(b.unsqueeze(0), x, w.t())
        x = tide.addmm(b:unsqueeze(1), x, w:t())
    else
        x = x:matmul(w:t())
        x = bias_act(x, b, { act = self.activation })
    end
    return x
end

-- class Conv2dLayer(torch.nn.Module):
local Conv2dLayer = nn.Module:extend("Conv2dLayer")
-- def __init__(self, in_channels, out_channels, kernel_size, bias=True, activation='linear',
--     up=1, down=1, resample_filter=[1,3,3,1], conv_clamp=None, channels_last=False,
--     trainable=True):  (channels_last is not ported: tide has no memory formats)
function Conv2dLayer:init(in_channels, out_channels, kernel_size, opts)
    opts = opts or {}
    self.activation = opts.activation or "linear"
    self.up = opts.up or 1
    self.down = opts.down or 1
    self.conv_clamp = opts.conv_clamp
    self:register_buffer("resample_filter", setup_filter(opts.resample_filter or { 1, 3, 3, 1 }))
    -- self.padding = kernel_size // 2
    self.padding = floor(kernel_size / 2)
    self.weight_gain = 1 / math.sqrt(in_channels * (kernel_size ^ 2))
    self.act_gain = activation_funcs[self.activation].def_gain

    local weight = tide.randn({ out_channels, in_channels, kernel_size, kernel_size })
    local bias = (opts.bias ~= false) and tide.zeros({ out_channels }) or nil
    if opts.trainable ~= false then
        self.weight = nn.Parameter(weight)
        self.bias = bias ~= nil and nn.Parameter(bias) or nil
    else
        self:register_buffer("weight", weight)
        if bias ~= nil then
            self:register_buffer("bias", bias)
        end
    end
end

function Conv2dLayer:forward(x, gain)
    gain = gain or 1
    local w = self.weight * self.weight_gain
    local b = self.bias ~= nil and self.bias:to(x.dtype) or nil
    local flip_weight = (self.up == 1) -- slightly faster
    x = conv2d_resample(x, w:to(x.dtype), { f = self.resample_filter, up = self.up,
        down = self.down, padding = self.padding, flip_weight = flip_weight })

    local act_gain = self.act_gain * gain
    local act_clamp = self.conv_clamp ~= nil and self.conv_clamp * gain or nil
    x = bias_act(x, b, { act = self.activation, gain = act_gain, clamp = act_clamp })
    return x
end

-- class MappingNetwork(torch.nn.Module):
local MappingNetwork = nn.Module:extend("MappingNetwork")
-- def __init__(self, z_dim, c_dim, w_dim, num_ws, num_layers=8, embed_features=None,
--     layer_features=None, activation='lrelu', lr_multiplier=0.01, w_avg_beta=0.995):
-- (num_ws = None and w_avg_beta = None are false here: Lua's nil is "use the default")
function MappingNetwork:init(z_dim, c_dim, w_dim, num_ws, opts)
    opts = opts or {}
    local num_layers = opts.num_layers or 8
    local embed_features, layer_features = opts.embed_features, opts.layer_features
    local activation, lr_multiplier = opts.activation or "lrelu", opts.lr_multiplier or 0.01
    local w_avg_beta = opts.w_avg_beta
    if w_avg_beta == nil then w_avg_beta = 0.995 end
    self.z_dim = z_dim
    self.c_dim = c_dim
    self.w_dim = w_dim
    self.num_ws = num_ws
    self.num_layers = num_layers
    self.w_avg_beta = w_avg_beta

    if embed_features == nil then
        embed_features = w_dim
    end
    if c_dim == 0 then
        embed_features = 0
    end
    if layer_features == nil then
        layer_features = w_dim
    end
    -- features_list = [z_dim + embed_features] + [layer_features] * (num_layers - 1) + [w_dim]
    local features_list = { z_dim + embed_features }
    for _ = 1, num_layers - 1 do features_list[#features_list + 1] = layer_features end
    features_list[#features_list + 1] = w_dim

    if c_dim > 0 then
        self.embed = FullyConnectedLayer(c_dim, embed_features)
    end
    -- for idx in range(num_layers):
    for idx = 0, num_layers - 1 do
        local in_features = features_list[idx + 1]
        local out_features = features_list[idx + 2]
        local layer = FullyConnectedLayer(in_features, out_features, { activation = activation,
            lr_multiplier = lr_multiplier })
        -- setattr(self, f'fc{idx}', layer)
        self["fc" .. idx] = layer
    end

    if num_ws and w_avg_beta then
        self:register_buffer("w_avg", tide.zeros({ w_dim }))
    end
end

-- def forward(self, z, c, truncation_psi=1, truncation_cutoff=None, skip_w_avg_update=False):
function MappingNetwork:forward(z, c, opts)
    opts = opts or {}
    local truncation_psi, truncation_cutoff = opts.truncation_psi or 1, opts.truncation_cutoff
    -- Embed, normalize, and concat inputs.
    local x
    if self.z_dim > 0 then
        x = normalize_2nd_moment(z:to("float32"))
    end
    if self.c_dim > 0 then
        local y = normalize_2nd_moment(self.embed(c:to("float32")))
        -- x = torch.cat([x, y], dim=1) if x is not None else y
        x = x ~= nil and tide.cat({ x, y }, 2) or y
    end

    -- Main layers.
    for idx = 0, self.num_layers - 1 do
        local layer = self["fc" .. idx]
        x = layer(x)
    end

    -- Update moving average of W.
    if self.w_avg_beta and self.training and not opts.skip_w_avg_update then
        -- self.w_avg.copy_(x.detach().mean(dim=0).lerp(self.w_avg, self.w_avg_beta))
        self.w_avg:copy_(x:detach():mean(1):lerp(self.w_avg, self.w_avg_beta))
    end

    -- Broadcast.
    if self.num_ws then
        -- x = x.unsqueeze(1).repeat([1, self.num_ws, 1])
        local xu = x:unsqueeze(2)
        x = xu["repeat"](xu, { 1, self.num_ws, 1 })
    end

    -- Apply truncation.
    if truncation_psi ~= 1 then
        assert(self.w_avg_beta)
        if not self.num_ws or truncation_cutoff == nil then
            x = self.w_avg:lerp(x, truncation_psi)
        else
            -- x[:, :truncation_cutoff] = self.w_avg.lerp(x[:, :truncation_cutoff], truncation_psi)
            x[{ {}, { 1, truncation_cutoff } }] =
                self.w_avg:lerp(x[{ {}, { 1, truncation_cutoff } }], truncation_psi)
        end
    end
    return x
end

-- class SynthesisLayer(torch.nn.Module):
local SynthesisLayer = nn.Module:extend("SynthesisLayer")
-- def __init__(self, in_channels, out_channels, w_dim, resolution, kernel_size=3, up=1,
--     use_noise=True, activation='lrelu', resample_filter=[1,3,3,1], conv_clamp=None,
--     channels_last=False):
function SynthesisLayer:init(in_channels, out_channels, w_dim, resolution, opts)
    opts = opts or {}
    local kernel_size = opts.kernel_size or 3
    self.resolution = resolution
    self.up = opts.up or 1
    self.use_noise = opts.use_noise ~= false
    self.activation = opts.activation or "lrelu"
    self.conv_clamp = opts.conv_clamp
    self:register_buffer("resample_filter", setup_filter(opts.resample_filter or { 1, 3, 3, 1 }))
    self.padding = floor(kernel_size / 2)
    self.act_gain = activation_funcs[self.activation].def_gain

    self.affine = FullyConnectedLayer(w_dim, in_channels, { bias_init = 1 })
    self.weight = nn.Parameter(tide.randn({ out_channels, in_channels, kernel_size,
        kernel_size }))
    if self.use_noise then
        self:register_buffer("noise_const", tide.randn({ resolution, resolution }))
        -- self.noise_strength = torch.nn.Parameter(torch.zeros([]))
        self.noise_strength = nn.Parameter(tide.zeros({}))
    end
    self.bias = nn.Parameter(tide.zeros({ out_channels }))
end

-- def forward(self, x, w, noise_mode='random', fused_modconv=True, gain=1):
function SynthesisLayer:forward(x, w, opts)
    opts = opts or {}
    local noise_mode, gain = opts.noise_mode or "random", opts.gain or 1
    assert(noise_mode == "random" or noise_mode == "const" or noise_mode == "none")
    local styles = self.affine(w)

    local noise
    if self.use_noise and noise_mode == "random" then
        noise = tide.randn({ x:size(1), 1, self.resolution, self.resolution },
            { device = x.device }) * self.noise_strength
    end
    if self.use_noise and noise_mode == "const" then
        noise = self.noise_const * self.noise_strength
    end

    local flip_weight = (self.up == 1) -- slightly faster
    x = modulated_conv2d(x, self.weight, styles, { noise = noise, up = self.up,
        padding = self.padding, resample_filter = self.resample_filter,
        flip_weight = flip_weight, fused_modconv = opts.fused_modconv })

    local act_gain = self.act_gain * gain
    local act_clamp = self.conv_clamp ~= nil and self.conv_clamp * gain or nil
    x = bias_act(x, self.bias:to(x.dtype), { act = self.activation, gain = act_gain,
        clamp = act_clamp })
    return x
end

describe("stylegan2-ada upfirdn2d / bias_act (impl='ref')", function()
    it("setup_filter normalizes, flips, scales, goes separable at 8 taps", function()
        check(REF.filt, setup_filter({ 1, 3, 3, 1 }), "filt")
        check(REF.filt_flip_gain, setup_filter({ 1, 2, 4 }, { flip_filter = true, gain = 2 }),
            "filt_flip_gain")
        check(REF.filt_sep, setup_filter({ 1, 2, 3, 4, 5, 6, 7, 8 }), "filt_sep")
    end)
    it("upfirdn2d: up 2, down 2, padding / crop, flip_filter, separable", function()
        local x = det({ 2, 2, 4, 4 })
        local f = setup_filter({ 1, 3, 3, 1 })
        check(REF.up2, upsample2d(x, f), "up2")
        check(REF.down2, downsample2d(x, f), "down2")
        local fa = setup_filter(tide.tensor({ { 1, 2 }, { 3, 5 } }), { normalize = false })
        check(REF.pad, upfirdn2d(x, fa, { padding = { 2, 1, 0, -1 } }), "pad")
        check(REF.pad_flip, upfirdn2d(x, fa, { padding = { 2, 1, 0, -1 }, flip_filter = true,
            gain = 3 }), "pad_flip")
        local fs = setup_filter({ 1, 2, 1, 3, 1, 1, 2, 1 }, { separable = true })
        check(REF.updown, upfirdn2d(x, fs, { up = 2, down = { 2, 1 }, padding = { 1, 2, 3, 0 } }),
            "updown")
        check(REF.filt2d, filter2d(x, fa, { padding = 1 }), "filt2d")
    end)
    it("bias_act: each activation with clamp, alpha, gain, dim", function()
        local xb = det({ 2, 3, 5 }, 1.3, 0.2) * 2
        local bb = det({ 3 }, 0.9, 0.5)
        for _, act in ipairs(ACTS) do
            check(REF["act_" .. act], bias_act(xb, bb, { act = act, clamp = 0.9 }), act)
        end
        check(REF.act_lrelu_alpha, bias_act(xb, bb, { dim = 2, act = "lrelu", alpha = 0.3,
            gain = 1.5 }), "lrelu alpha")
        check(REF.act_swish_dim2, bias_act(xb, det({ 5 }, 0.4, 0.1), { dim = 3, act = "swish" }),
            "swish dim")
    end)
    it("fma's gradients unbroadcast", function()
        local a = tide.tensor({ { 1 }, { 2 } }, { dtype = "float32" }):requires_grad_()
        local b = tide.tensor({ 3, 4, 5 }, { dtype = "float32" }):requires_grad_()
        local c = tide.tensor({ 0.5 }, { dtype = "float32" }):requires_grad_()
        local y = fma(a, b, c)
        assert.are.same({ { 3.5, 4.5, 5.5 }, { 6.5, 8.5, 10.5 } }, y:tolist())
        y:sum():backward()
        assert.are.same({ { 12 }, { 12 } }, a.grad:tolist())
        assert.are.same({ 3, 3, 3 }, b.grad:tolist())
        assert.are.same({ 6 }, c.grad:tolist())
    end)
end)

describe("stylegan2-ada conv2d_resample (Conv2dLayer.forward's body)", function()
    it("up 1 / up 2 (transposed conv) / down 2, with bias, lrelu gain and clamp", function()
        local xm = det({ 2, 3, 5, 5 })
        local f = setup_filter({ 1, 3, 3, 1 })
        for _, ud in ipairs({ { 1, 1 }, { 2, 1 }, { 1, 2 } }) do
            local up, down = ud[1], ud[2]
            -- w = self.weight * self.weight_gain
            local w = det({ 2, 3, 3, 3 }, 0.44, 0.3) * (1 / math.sqrt(3 * 3 ^ 2))
            local b = tide.tensor({ 0.1, -0.2 })
            local x = conv2d_resample(xm, w, { f = f, up = up, down = down, padding = 1,
                flip_weight = (up == 1) })
            -- act_gain = self.act_gain * gain; act_clamp = self.conv_clamp * gain
            x = bias_act(x, b, { act = "lrelu", gain = math.sqrt(2) * 1.2, clamp = 0.8 * 1.2 })
            check(REF["conv_" .. up .. "_" .. down], x, "conv " .. up .. " " .. down)
        end
    end)
end)

describe("stylegan2-ada training/networks.py", function()
    local xm = det({ 2, 3, 5, 5 })
    local wm = det({ 4, 3, 3, 3 }, 0.53, 0.7, "cos")
    local noise = det({ 5, 5 }, 0.29, 0.2) * 0.1

    it("modulated_conv2d fused / unfused: demodulate, no demodulate, up 2, d/styles", function()
        local f = setup_filter({ 1, 3, 3, 1 })
        for _, fused in ipairs({ true, false }) do
            local k = fused and "True" or "False"
            local st = (det({ 2, 3 }, 0.81, 0.4) + 1.5):requires_grad_()
            local y = modulated_conv2d(xm, wm, st, { noise = noise, padding = 1,
                fused_modconv = fused })
            check(REF["mod_" .. k], y, "mod " .. k)
            local loss = (y * det(y.shape, 0.17, 0.9, "cos")):sum()
            loss:backward()
            check(REF["mod_" .. k .. "_gst"], st.grad, "mod grad " .. k)
            local st2 = det({ 2, 3 }, 0.81, 0.4) + 1.5
            check(REF["mod_nodemod_" .. k], modulated_conv2d(xm, wm, st2, { padding = 1,
                demodulate = false, fused_modconv = fused }), "mod nodemod " .. k)
            check(REF["mod_up_" .. k], modulated_conv2d(xm, wm, st2, { up = 2, padding = 1,
                resample_filter = f, flip_weight = false, fused_modconv = fused }), "mod up " .. k)
        end
    end)

    it("FullyConnectedLayer: lrelu with lr_multiplier and bias_init, linear by addmm", function()
        local fc = FullyConnectedLayer(3, 4, { activation = "lrelu", lr_multiplier = 0.5,
            bias_init = 0.2 })
        tide.no_grad(function() fc.weight:copy_(det({ 4, 3 }, 0.6, 0.1)) end)
        check(REF.fc, fc(det({ 2, 3 }, 0.3, 0.5)), "fc")
        local fc2 = FullyConnectedLayer(3, 4, { bias_init = 0.2 })
        tide.no_grad(function() fc2.weight:copy_(det({ 4, 3 }, 0.6, 0.1)) end)
        check(REF.fc_lin, fc2(det({ 2, 3 }, 0.3, 0.5)), "fc_lin")
        assert.equal(2, #fc:parameters())
        assert.is_nil(FullyConnectedLayer(3, 4, { bias = false }).bias)
    end)

    it("Conv2dLayer up 1 / up 2 (transposed conv) / down 2, lrelu gain and clamp", function()
        for _, ud in ipairs({ { 1, 1 }, { 2, 1 }, { 1, 2 } }) do
            local up, down = ud[1], ud[2]
            local cl = Conv2dLayer(3, 2, 3, { activation = "lrelu", up = up, down = down,
                conv_clamp = 0.8 })
            tide.no_grad(function()
                cl.weight:copy_(det({ 2, 3, 3, 3 }, 0.44, 0.3))
                cl.bias:copy_(tide.tensor({ 0.1, -0.2 }))
            end)
            check(REF["conv_" .. up .. "_" .. down], cl(xm, 1.2), "conv " .. up .. " " .. down)
        end
        local frozen = Conv2dLayer(3, 2, 1, { trainable = false })
        assert.equal(0, #frozen:parameters())
        assert.equal(3, #frozen:buffers())
    end)

    it("MappingNetwork: embed, w_avg tracking, truncation with and without a cutoff", function()
        local mp = MappingNetwork(4, 2, 4, 3, { num_layers = 2, w_avg_beta = 0.9 })
        tide.no_grad(function()
            mp.embed.weight:copy_(det({ 4, 2 }, 0.5, 0.2))
            mp.fc0.weight:copy_(det({ 4, 8 }, 0.3, 0.1) * 100)
            mp.fc1.weight:copy_(det({ 4, 4 }, 0.7, 0.6) * 100)
        end)
        local z, c = det({ 2, 4 }, 0.9, 0.3), det({ 2, 2 }, 0.4, 1.0)
        check(REF.map_ws, mp(z, c), "map_ws")
        mp(z * 0.5, c)
        check(REF.map_wavg, mp.w_avg, "map_wavg")
        mp:eval()
        check(REF.map_trunc, mp(z, c, { truncation_psi = 0.7 }), "map_trunc")
        check(REF.map_cut, mp(z, c, { truncation_psi = 0.5, truncation_cutoff = 2 }), "map_cut")
        check(REF.map_wavg2, mp.w_avg, "map_wavg2")
    end)

    it("SynthesisLayer: const noise fused / unfused, no noise", function()
        local sl = SynthesisLayer(3, 4, 4, 5, { conv_clamp = 1.0 })
        tide.no_grad(function()
            sl.weight:copy_(wm)
            sl.affine.weight:copy_(det({ 3, 4 }, 0.2, 0.2))
            sl.noise_const:copy_(noise * 10)
            sl.noise_strength:fill_(0.3)
            sl.bias:copy_(tide.tensor({ 0.1, -0.1, 0.2, 0.0 }))
        end)
        local wl = det({ 2, 4 }, 0.35, 0.15)
        check(REF.syn_fused, sl(xm, wl, { noise_mode = "const" }), "syn_fused")
        check(REF.syn_unfused, sl(xm, wl, { noise_mode = "const", fused_modconv = false }),
            "syn_unfused")
        check(REF.syn_none, sl(xm, wl, { noise_mode = "none" }), "syn_none")
    end)
end)
