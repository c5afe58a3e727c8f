-- F.interpolate, as PyTorch 1.13's kernels compute it: the modes "nearest", "nearest-exact"
-- and "area" over 1 to 3 spatial dims, "linear" (1), "bilinear" (2), "bicubic" (2) and
-- "trilinear" (3). Every mode but area is separable: one dim after the other, each output cell
-- a weighted sum of source cells along that dim picked by index_select (1, 2 or 4 of them, at
-- the source positions PyTorch's kernels compute, float32 ones rounded as float32 arithmetic
-- rounds them), so autograd differentiates it; area is adaptive average pooling. Required from
-- the end of functional.lua; its argument checks are tide.nn._args.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local C = require("tide.nn._args")

local raise = autograd.raise
local fround32 = args.fround32

-- the spatial dims each mode takes (0: any of 1 to 3)
local MODES = { nearest = 0, ["nearest-exact"] = 0, area = 0, linear = 1, bilinear = 2,
    bicubic = 2, trilinear = 3 }
local LAYOUT = { "3-D {N, C, L}", "4-D {N, C, H, W}", "5-D {N, C, D, H, W}" }
local OPTIONS = { "size", "scale_factor", "mode", "align_corners", "recompute_scale_factor",
    "antialias" }

-- nearest: floor(o * scale) with a float32 scale, capped; nearest-exact: from pixel centres,
-- floor((o + 1/2) scale) (1-based results)
local function nearest_index(in_size, out_size, scale, exact)
    local s = fround32(scale)
    local idx = {}
    for o = 0, out_size - 1 do
        local i
        if exact then
            i = math.floor(fround32(fround32(o + 0.5) * s))
        else
            i = out_size == in_size and o or math.floor(fround32(o * s))
        end
        idx[o + 1] = math.min(i, in_size - 1) + 1
    end
    return idx
end

-- nearest: where every spatial dim's indices repeat each cell k times (an upsampling by a whole
-- factor, PyTorch's scale_factor = 2), the input viewed with a dim of k after each and expanded,
-- copied once; nil otherwise. The same cells as the index_select per dim (checked index by
-- index), in one pass: a [8, 64, 32, 32] batch doubled had taken 3.4x PyTorch's time.
local function whole_repeats(input, sizes, scales, exact)
    local view, wide, out = {}, {}, {}
    for d = 1, 2 do
        view[d], wide[d], out[d] = input:size(d), input:size(d), input:size(d)
    end
    for i = 1, #sizes do
        local in_size, n = input:size(2 + i), sizes[i]
        if in_size == 0 or n % in_size ~= 0 then
            return nil
        end
        local k = math.floor(n / in_size)
        local idx = nearest_index(in_size, n, scales[i] or in_size / n, exact)
        for o = 1, n do
            if idx[o] ~= math.floor((o - 1) / k) + 1 then
                return nil
            end
        end
        view[#view + 1], view[#view + 2] = in_size, 1
        wide[#wide + 1], wide[#wide + 2] = in_size, k
        out[#out + 1] = n
    end
    return input:reshape(view):expand(wide):reshape(out)
end

-- a source position of output o (PyTorch's area_pixel_compute_source_index): from corners with
-- align_corners, else from pixel centres, clamped at 0 but for cubic; float32's rounding where
-- single
local function source(o, s, align, cubic, single)
    local r = single and fround32 or function(v) return v end
    if align then
        return r(s * o)
    end
    local src = r(r(s * (o + 0.5)) - 0.5)
    return (not cubic and src < 0) and 0 or src
end

local function linear_index(in_size, out_size, scale, align, single)
    local i0, i1, w1 = {}, {}, {}
    local s = single and fround32(scale) or scale
    for o = 0, out_size - 1 do
        local src = source(o, s, align, false, single)
        local lo = math.min(math.floor(src), in_size - 1)
        i0[o + 1], i1[o + 1] = lo + 1, lo + (lo < in_size - 1 and 1 or 0) + 1
        w1[o + 1] = src - lo
    end
    return i0, i1, w1
end

-- Keys' cubic convolution with A = -0.75 (PyTorch's get_cubic_upsample_coefficients): the
-- weights of the 4 cells around a source position t past its floor
local A = -0.75
local function cubic_weights(t)
    local function near(x) -- |x| <= 1
        return ((A + 2) * x - (A + 3)) * x * x + 1
    end
    local function far(x) -- 1 < |x| < 2
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    end
    return far(t + 1), near(t), near(1 - t), far(2 - t)
end

-- the 4 taps of each output (1-based cells, each clamped to the dim: the border repeats) and
-- their weights, around the floor of the source position (-1 before the first centre, as
-- PyTorch 1.13's kernel)
local function cubic_index(in_size, out_size, scale, align, single)
    local idx, w = { {}, {}, {}, {} }, { {}, {}, {}, {} }
    local s = single and fround32(scale) or scale
    for o = 0, out_size - 1 do
        local src = source(o, s, align, true, single)
        local lo = math.floor(src)
        local t = src - lo
        local ws = { cubic_weights(single and fround32(t) or t) }
        for j = 1, 4 do
            idx[j][o + 1] = math.min(math.max(lo - 2 + j, 0), in_size - 1) + 1
            w[j][o + 1] = ws[j]
        end
    end
    return idx, w
end

-- antialias (PyTorch 1.13's _compute_weights_aa, as PIL resamples): each output's taps are the
-- cells within the filter's support around its centre scale * (o + 1/2), the support widened
-- by the scale when downscaling, the weights a triangle (bilinear) or Keys' cubic with
-- A = -0.5 (bicubic) normalised to sum 1; taps past an output's cells weigh 0
local function aa_filter(mode)
    if mode == "bilinear" then
        return 2, function(x)
            x = math.abs(x)
            return x < 1 and 1 - x or 0
        end
    end
    local a = -0.5
    return 4, function(x)
        x = math.abs(x)
        if x < 1 then
            return ((a + 2) * x - (a + 3)) * x * x + 1
        elseif x < 2 then
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        end
        return 0
    end
end

local function aa_index(mode, in_size, out_size, scale, single)
    local r = single and fround32 or function(v) return v end
    local interp, filter = aa_filter(mode)
    scale = r(scale)
    local support = r(scale >= 1 and (interp * 0.5) * scale or interp * 0.5)
    local ntaps = math.ceil(support) * 2 + 1
    local invscale = scale >= 1 and r(1 / scale) or 1
    local idx, w = {}, {}
    for j = 1, ntaps do
        idx[j], w[j] = {}, {}
    end
    for o = 0, out_size - 1 do
        local center = r(scale * (o + 0.5))
        local function trunc(v) -- C's cast toward zero
            return v < 0 and math.ceil(v) or math.floor(v)
        end
        local xmin = math.max(trunc(r(center - support + 0.5)), 0)
        local xsize = math.min(trunc(r(center + support + 0.5)), in_size) - xmin
        local ws, total = {}, 0
        for j = 0, xsize - 1 do
            ws[j + 1] = r(filter(r(r(j + xmin - center + 0.5) * invscale)))
            total = total + ws[j + 1]
        end
        for j = 1, ntaps do
            idx[j][o + 1] = math.min(xmin + j - 1, in_size - 1) + 1
            w[j][o + 1] = (j <= xsize and total ~= 0) and ws[j] / total or
                (j <= xsize and ws[j] or 0)
        end
    end
    return idx, w
end

return function(F)
    local tensor_arg, options, int_arg = C.tensor_arg, C.options, C.int_arg
    local bool_opt, shape_str = C.bool_opt, C.shape_str

    -- the output sizes, and the scales given (1 / scale_factor, unless recomputed), per dim
    local function output_sizes(who, input, o, nsp)
        local function per_dim(v, what)
            -- a 0-d tensor stands for its value (PyTorch's size=x.shape[-1] * t0)
            v = args.scalar(v)
            local list = type(v) == "table" and v or {}
            if type(v) ~= "table" then
                for i = 1, nsp do
                    list[i] = v
                end
            end
            if #list ~= nsp then
                raise(string.format("tide: %s: %s needs %d value(s) for a %d-D input, got %d", who,
                    what, nsp, nsp + 2, #list))
            end
            for i = 1, nsp do
                list[i] = args.scalar(list[i])
                if type(list[i]) ~= "number" or list[i] <= 0 then
                    raise(string.format("tide: %s: %s must be positive numbers, got %s", who, what,
                        tostring(list[i])))
                end
            end
            return list
        end
        local sizes, scales = {}, {}
        if o.size ~= nil then
            sizes = per_dim(o.size, "size")
            for i = 1, nsp do
                sizes[i] = int_arg(sizes[i], who, "size", 1)
            end
        else
            local sf = per_dim(o.scale_factor, "scale_factor")
            for i = 1, nsp do
                local in_size = input:size(2 + i)
                sizes[i] = math.floor(in_size * sf[i])
                if not (sizes[i] < math.huge) then
                    raise(string.format("tide: %s: scale_factor %s makes dim %d of size %d " ..
                        "infinite", who, tostring(sf[i]), 2 + i, in_size))
                end
                if sizes[i] < 1 then
                    raise(string.format("tide: %s: scale_factor %g makes dim %d of size %d " ..
                        "empty", who, sf[i], 2 + i, in_size))
                end
                if not o.recompute_scale_factor then
                    scales[i] = 1 / sf[i]
                end
            end
        end
        -- the output and the per-position index tables within the memory budget, before the
        -- tables grow (scale_factor = math.huge used to grow them until the machine ran out)
        local elems, positions = input:size(1) * input:size(2), 0
        for i = 1, nsp do
            elems, positions = elems * sizes[i], positions + sizes[i]
        end
        args.check_budget(who, elems * 8 + positions * 64, 1, "the output",
            "pass a smaller size or scale_factor")
        return sizes, scales
    end

    -- sum_j x:index_select(d, idx[j]) * w[j], the weights along dim d
    local function taps(x, d, idx, w, n)
        local shape = {}
        for k = 1, x:dim() do
            shape[k] = k == d and n or 1
        end
        local dev, dt = x.device, x.dtype
        local out
        for j = 1, #idx do
            local wj = core.tensor(w[j], { dtype = dt, device = dev }):reshape(shape)
            local xj = x:index_select(d, core.tensor(idx[j], { dtype = "int64", device = dev }))
            out = out and out + xj * wj or xj * wj
        end
        return out
    end

    -- interpolate(input, {size = | scale_factor =, mode = "nearest", align_corners =,
    -- recompute_scale_factor =, antialias = false}): input {N, C, ...} with 1 to 3 spatial
    -- dims resampled to size (or each size times scale_factor, floored)
    function F.interpolate(input, opts)
        local who = "interpolate"
        tensor_arg(input, who, "input")
        local o = options(opts, who, OPTIONS)
        local mode = o.mode or "nearest"
        local nsp = input:dim() - 2
        if not MODES[mode] then
            raise(string.format("tide: %s: mode %q is not one of PyTorch's; use \"nearest\", " ..
                "\"nearest-exact\", \"area\", \"linear\", \"bilinear\", \"bicubic\" or " ..
                "\"trilinear\"", who, tostring(mode)))
        end
        local want = MODES[mode]
        if nsp < 1 or nsp > 3 or (want ~= 0 and want ~= nsp) then
            raise(string.format("tide: %s: mode %q takes a %s input, got %s", who, mode,
                want == 0 and "3-D {N, C, L}, 4-D {N, C, H, W} or 5-D {N, C, D, H, W}" or
                LAYOUT[want], shape_str(input)))
        end
        local linear = mode == "linear" or mode == "bilinear" or mode == "bicubic" or
            mode == "trilinear"
        if not linear and o.align_corners ~= nil then
            raise(string.format("tide: interpolate: align_corners is for the linear and cubic " ..
                "modes; leave it out with mode %q", mode))
        end
        local antialias = bool_opt(o.antialias, false, who, "antialias")
        if antialias and mode ~= "bilinear" and mode ~= "bicubic" then
            raise(string.format("tide: interpolate: antialias is for the modes \"bilinear\" " ..
                "and \"bicubic\" (as PyTorch's), not %q; leave it out", mode))
        end
        local align = bool_opt(o.align_corners, false, who, "align_corners")
        if (o.size == nil) == (o.scale_factor == nil) then
            raise("tide: interpolate: give either size or scale_factor, not both or neither")
        end
        local sizes, scales = output_sizes(who, input, o, nsp)
        if mode == "area" then
            local pool = nsp == 1 and F.adaptive_avg_pool1d or nsp == 2 and F.adaptive_avg_pool2d
                or F.adaptive_avg_pool3d
            return pool(input, nsp == 1 and sizes[1] or sizes)
        end
        local single = input.dtype ~= "float64" -- the kernels' float arithmetic below float64
        if not linear then
            local repeated = whole_repeats(input, sizes, scales, mode == "nearest-exact")
            if repeated then
                return repeated
            end
        end
        local out = input
        for i = nsp, 1, -1 do
            local d, in_size, n = 2 + i, input:size(2 + i), sizes[i]
            local scale
            if linear and align then
                scale = n > 1 and (in_size - 1) / (n - 1) or 0
            else
                scale = scales[i] or in_size / n
            end
            if not linear then
                local idx = nearest_index(in_size, n, scale, mode == "nearest-exact")
                out = out:index_select(d, core.tensor(idx, { dtype = "int64",
                    device = input.device }))
            elseif antialias then
                local idx, w = aa_index(mode, in_size, n, scale, single)
                out = taps(out, d, idx, w, n)
            elseif mode == "bicubic" then
                local idx, w = cubic_index(in_size, n, scale, align, single)
                out = taps(out, d, idx, w, n)
            else
                local i0, i1, w1 = linear_index(in_size, n, scale, align, single)
                local shape = {}
                for k = 1, out:dim() do
                    shape[k] = k == d and n or 1
                end
                local dev, dt = input.device, input.dtype
                local l1 = core.tensor(w1, { dtype = dt, device = dev }):reshape(shape)
                local a = out:index_select(d, core.tensor(i0, { dtype = "int64", device = dev }))
                local b = out:index_select(d, core.tensor(i1, { dtype = "int64", device = dev }))
                out = a * (1 - l1) + b * l1
            end
        end
        return out
    end
end
