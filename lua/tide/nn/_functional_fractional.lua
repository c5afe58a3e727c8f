-- Fractional max pooling for tide.nn.functional (Graham, 2014), PyTorch 1.13's:
-- fractional_max_pool2d / 3d and their _with_indices forms. Each plane (sample, channel) pools
-- over windows of kernel_size whose starts are pseudo-random: along a dim of n cells to o
-- outputs, with u that plane's sample in [0, 1) and alpha = (n - k) / (o - 1), window i starts at
-- floor((i + u) alpha) - floor(u alpha) and the last at n - k (ATen's generate_intervals,
-- computed in the input's float type, float32 for the half types, as its kernels do). The
-- samples are _random_samples {N, C, dims} when given (for the 2-D pool [.., 1] is the width's
-- and [.., 2] the height's; for the 3-D one depth, height, width), else drawn from tide's
-- generator. The windows are gathered and each result taken from them by its position, so the
-- gradient reaches the maxima only (added up where windows overlap). Required from the end of
-- functional.lua; its argument checks are tide.nn._args.
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
local I = require("tide.nn._internal")
local C = require("tide.nn._args")
local T = require("tide.nn._args3d")
local args = require("tide.op_args")
local raise = autograd.raise

local OPTIONS = { "output_size", "output_ratio", "return_indices", "_random_samples" }
local LAYOUT = { [2] = "{N, C, H, W} or {C, H, W}", [3] = "{N, C, D, H, W} or {C, D, H, W}" }

-- kernel_size or output_size: an integer or a list of nd integers, each >= 1
local function sizes(v, nd, who, what)
    if nd == 3 then
        return T.triple(v, nil, who, what, 1)
    end
    local a, b = I.pair(v, who, what, 1)
    return { a, b }
end

-- output_ratio: a number or a list of nd numbers, each in (0, 1]
local function ratios(v, nd, who)
    local t = v
    if type(v) == "number" then
        t = {}
        for i = 1, nd do
            t[i] = v
        end
    end
    local ok = type(t) == "table" and not autograd.is_tensor(t) and #t == nd
    for i = 1, ok and nd or 0 do
        ok = ok and type(t[i]) == "number" and t[i] > 0 and t[i] <= 1
    end
    if not ok then
        raise(string.format("tide: %s: expected output_ratio to be a number in (0, 1] or a " ..
            "list of %d such numbers, got %s", who, nd, T.show(v)))
    end
    return t
end

-- the window starts [P, o] (int64, 0-based) of one dim of n cells pooled to o outputs by k,
-- from the planes' samples u [P] (CPU, dtype dt): ATen's generate_intervals in dt's arithmetic
local function starts(u, n, o, k, dt)
    local P = u:size(1)
    local last = core.full({ P, 1 }, n - k, { dtype = "int64" })
    if o == 1 then
        return last
    end
    -- (n - k) / (o - 1) rounded once to dt, as the kernel's division of two exact values
    local alpha = core.tensor((n - k) / (o - 1), { dtype = dt })
    local i = core.arange(0, o - 1, { dtype = dt }):view(1, o - 1)
    local uu = u:view(P, 1)
    local s = i:add(uu):mul(alpha):floor():sub(uu:mul(alpha):floor())
    return core.cat({ s:to("int64"), last }, 2)
end

-- fractional max pooling of input over its last nd dims; returns the result and the 1-based
-- flat positions of the maxima within each plane
local function fractional(who, input, kernel_size, opts, nd)
    C.tensor_arg(input, who, "input")
    local o = C.options(opts, who, OPTIONS)
    C.bool_opt(o.return_indices, false, who, "return_indices")
    local dims = input:dim()
    if dims ~= nd + 1 and dims ~= nd + 2 then
        raise(string.format("tide: %s: expected input %s, got %s", who, LAYOUT[nd],
            C.shape_str(input)))
    end
    if not C.FLOAT_DTYPES[input.dtype] then
        raise("tide: " .. who .. ": expected a floating-point input, got " .. input.dtype)
    end
    local k = sizes(kernel_size, nd, who, "kernel_size")
    if o.output_size == nil and o.output_ratio == nil then
        raise("tide: " .. who .. ": pass output_size or output_ratio (the pooled size, or " ..
            "its ratio to the input's)")
    end
    if o.output_size ~= nil and o.output_ratio ~= nil then
        raise("tide: " .. who .. ": pass output_size or output_ratio, not both")
    end
    local size, out = {}, nil
    for d = 1, nd do
        size[d] = input:size(dims - nd + d)
    end
    if o.output_size ~= nil then
        out = sizes(o.output_size, nd, who, "output_size")
    else
        local r = ratios(o.output_ratio, nd, who)
        out = {}
        for d = 1, nd do
            out[d] = math.floor(size[d] * r[d]) -- Python's int(), of a positive product
        end
    end
    for d = 1, nd do
        if out[d] < 1 or out[d] + k[d] - 1 > size[d] then
            raise(string.format("tide: %s: kernel_size %d and output size %d need at least " ..
                "%d cells along dim %d, got %d; use a smaller kernel_size or output size", who,
                k[d], out[d], out[d] + k[d] - 1, dims - nd + d, size[d]))
        end
    end
    local N = dims == nd + 2 and input:size(1) or 1
    local planes = input:size(dims - nd)
    -- the intervals in the input's float type (float32 for the half types, the CUDA
    -- kernels' accumulate type)
    local dt = (input.dtype == "float64" or input.dtype == "float32") and input.dtype or "float32"
    local samples = o._random_samples
    if samples ~= nil then
        C.tensor_arg(samples, who, "_random_samples")
        if samples:dim() ~= 3 or samples:size(1) ~= N or samples:size(2) ~= planes or
            samples:size(3) ~= nd then
            raise(string.format("tide: %s: expected _random_samples of shape {%d, %d, %d} " ..
                "(batch, channels, one per pooled dim), got %s", who, N, planes, nd,
                C.shape_str(samples)))
        end
        if samples.dtype ~= input.dtype then
            raise(string.format("tide: %s: expected _random_samples of the input's dtype %s, " ..
                "got %s", who, input.dtype, samples.dtype))
        end
        samples = samples:detach():to("cpu"):to(dt)
        local lo, hi
        if samples:numel() > 0 then
            lo, hi = samples:min():item(), samples:max():item()
        end
        if lo and (lo < 0 or hi >= 1 or lo ~= lo or hi ~= hi) then
            raise(string.format("tide: %s: expected _random_samples in [0, 1), got values " ..
                "from %.17g to %.17g", who, lo, hi))
        end
    else
        samples = core.rand({ N, planes, nd }, { dtype = input.dtype, device = input.device })
            :to("cpu"):to(dt)
    end
    local P, O, K = N * planes, 1, 1
    for d = 1, nd do
        O, K = O * out[d], K * k[d]
    end
    local plane = 1
    for d = 1, nd do
        plane = plane * size[d]
    end
    args.check_budget(who, 1.0 * P * O * K, 16, ("windows of %s cells at %s outputs per plane")
        :format(T.by(k), T.by(out)), "ask for a smaller kernel_size or output size")
    -- pos [P, o1.., k1..]: each window cell's flat 0-based position in its plane, a dim at a
    -- time
    local u = samples:reshape(P, nd)
    local pos, stride = nil, plane
    for d = 1, nd do
        stride = compat.idiv(stride, size[d])
        local col = nd == 2 and 3 - d or d -- the 2-D samples list the width's first
        local first = starts(u:select(2, col), size[d], out[d], k[d], dt)
        local cells = first:view(P, out[d], 1):add(
            core.arange(0, k[d], { dtype = "int64" }):view(1, 1, k[d])):mul(stride)
        local shape = { P }
        for j = 1, 2 * nd do
            shape[j + 1] = 1
        end
        shape[d + 1], shape[nd + d + 1] = out[d], k[d]
        cells = cells:view(shape)
        pos = pos and pos:add(cells) or cells
    end
    pos = pos:reshape(P, O * K):add(1):to(input.device) -- 1-based, as gather and the indices
    local win = input:reshape(P, plane):gather(2, pos):view(P, O, K)
    -- the first maximum of a window, or its last NaN (the kernel takes every NaN it meets)
    local _, first = win:max(3, true)
    local at = core.arange(1, K + 1, { dtype = "int64", device = input.device })
    local last_nan = win:ne(win):long():mul(at):max(3, true)
    local idx = core.where(last_nan:gt(0), last_nan, first)
    local shape = {}
    for d = 1, dims - nd do
        shape[d] = input:size(d)
    end
    for d = 1, nd do
        shape[#shape + 1] = out[d]
    end
    local y = win:gather(3, idx):reshape(shape)
    local indices = pos:view(P, O, K):gather(3, idx):reshape(shape)
    return y, indices, o.return_indices == true
end

return function(F)
    -- fractional_max_pool2d(input, kernel_size[, {output_size = | output_ratio =,
    -- return_indices = false, _random_samples =}]): input {N, C, H, W} or {C, H, W}; sizes an
    -- integer or {h, w}, output_ratio a number or {h, w} in (0, 1] (the output
    -- floor(size * ratio)); with return_indices also the 1-based flat positions (h - 1) W + w
    function F.fractional_max_pool2d(input, kernel_size, opts)
        local y, indices, want = fractional("fractional_max_pool2d", input, kernel_size, opts, 2)
        if want then
            return y, indices
        end
        return y
    end

    -- fractional_max_pool3d(input, kernel_size[, opts]): input {N, C, D, H, W} or {C, D, H,
    -- W}, sizes an integer or {d, h, w}; indices the 1-based flat positions in D H W
    function F.fractional_max_pool3d(input, kernel_size, opts)
        local y, indices, want = fractional("fractional_max_pool3d", input, kernel_size, opts, 3)
        if want then
            return y, indices
        end
        return y
    end

    -- the _with_indices forms: the values and the indices, whatever return_indices says
    function F.fractional_max_pool2d_with_indices(input, kernel_size, opts)
        local y, indices = fractional("fractional_max_pool2d_with_indices", input, kernel_size,
            opts, 2)
        return y, indices
    end

    function F.fractional_max_pool3d_with_indices(input, kernel_size, opts)
        local y, indices = fractional("fractional_max_pool3d_with_indices", input, kernel_size,
            opts, 3)
        return y, indices
    end
end
