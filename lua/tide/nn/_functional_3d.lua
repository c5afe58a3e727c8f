-- The 3-D layers of tide.nn.functional, as PyTorch 1.13 computes them: conv3d,
-- conv_transpose3d, max_pool3d, avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool3d and
-- dropout3d. Each is a composite of the 2-D kernels (H and W) and a gather, unfold or fold along
-- the depth, so autograd comes from those; no kernel of its own. Required from the end of
-- functional.lua; its argument checks are tide.nn._args and tide.nn._args3d.
local compat = require("tide._compat")
local idiv = compat.idiv
local core = require("tide.core")
local autograd = require("tide.autograd")
local I = require("tide.nn._internal")
local C = require("tide.nn._args")
local T = require("tide.nn._args3d")
local args = require("tide.op_args")
local raise = autograd.raise

local triple, by, commas = T.triple, T.by, T.commas

return function(F)
    local tensor_arg, options = C.tensor_arg, C.options
    local int_arg, bool_opt, shape_str = C.int_arg, C.bool_opt, C.shape_str

    local function float_input(input, who)
        if not C.FLOAT_DTYPES[input.dtype] then
            raise("tide: " .. who .. ": expected a floating-point input, got " .. input.dtype)
        end
    end

    local function is_one(t, v)
        return t[1] == v and t[2] == v and t[3] == v
    end

    -- the last three sizes of x
    local function spatial(x)
        local nd = x:dim()
        return { x:size(nd - 2), x:size(nd - 1), x:size(nd) }
    end

    -- ---- convolution ----

    -- input [N, C, D, H, W], weight [Cout, C / groups, kd, kh, kw], bias [Cout]; {stride =,
    -- padding =, dilation = (each an integer or {d, h, w}), groups =}. The depth windows are
    -- unfolded (im2col along D) into the channels and the output depth into the batch, so one
    -- conv2d over [N Dout, groups kd C/groups, H, W] with the weight's depth in its channels
    -- does the rest.
    function F.conv3d(input, weight, bias, opts)
        local who = "conv3d"
        tensor_arg(input, who, "input")
        if type(opts) == "table" and type(opts.padding) == "string" then
            return F._string_padding(F.conv3d, who, input, weight, bias, opts, 3)
        end
        if input:dim() == 4 then -- unbatched {C, D, H, W}, as PyTorch
            return F._batch_of_one(F.conv3d, input, weight, bias, opts)
        end
        local o, groups = F._conv_args(who, input, weight, bias, opts, 5, "{N, C, D, H, W}")
        float_input(input, who)
        local k = { weight:size(3), weight:size(4), weight:size(5) }
        local s = triple(o.stride, 1, who, "stride", 1)
        local p = triple(o.padding, 0, who, "padding", 0)
        local d = triple(o.dilation, 1, who, "dilation", 1)
        local size, out = spatial(input), {}
        for i = 1, 3 do
            out[i] = idiv(size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1, s[i]) + 1
        end
        if out[1] < 1 or out[2] < 1 or out[3] < 1 then
            local dil = is_one(d, 1) and "" or " (dilation " .. commas(d) .. ")"
            raise(string.format("tide: %s: input %s (padding %s) is smaller than the kernel %s%s",
                who, by(size), commas(p), by(k), dil))
        end
        local n, c, cout = input:size(1), input:size(2), weight:size(1)
        local cg, h, w = idiv(c, groups), size[2], size[3]
        args.check_budget(who, 1.0 * n * out[1] * (c * k[1] * h * w + cout * out[2] * out[3]),
            8, ("an output of %s with its depth windows"):format(by(out)),
            "use less padding or a larger stride")
        -- [N, C H W kd, Dout]: channel (c, h, w, j) holds depth o s + j d - p of output depth o
        local planes = input:permute(1, 2, 4, 5, 3):reshape(n, c * h * w, size[1], 1)
        local cols = F.unfold(planes, { k[1], 1 },
            { stride = { s[1], 1 }, padding = { p[1], 0 }, dilation = { d[1], 1 } })
        local x = cols:reshape(n, groups, cg, h, w, k[1], out[1]):permute(1, 7, 2, 6, 3, 4, 5)
            :reshape(n * out[1], groups * k[1] * cg, h, w)
        local wt = weight:permute(1, 3, 2, 4, 5):reshape(cout, k[1] * cg, k[2], k[3])
        local y = F.conv2d(x, wt, bias, { stride = { s[2], s[3] }, padding = { p[2], p[3] },
            dilation = { d[2], d[3] }, groups = groups })
        return y:reshape(n, out[1], cout, out[2], out[3]):permute(1, 3, 2, 4, 5):contiguous()
    end

    -- input [N, Cin, D, H, W], weight [Cin, Cout / groups, kd, kh, kw], bias [Cout];
    -- {stride =, padding =, output_padding =, dilation =, groups =}: conv3d's gradient with
    -- respect to its input. One conv_transpose2d over [N D, Cin, H, W] with the weight's depth
    -- in its output channels, then each depth's share added into its output depths by fold
    -- (col2im along D); the depth padding is cropped and output_padding added after.
    function F.conv_transpose3d(input, weight, bias, opts)
        local who = "conv_transpose3d"
        local o = F._conv_transpose_args(who, input, weight, bias, opts)
        if input:dim() == 4 then -- unbatched {Cin, D, H, W}, as PyTorch
            return F._batch_of_one(F.conv_transpose3d, input, weight, bias, o)
        end
        local groups = int_arg(o.groups or 1, who, "groups", 1)
        if input:dim() ~= 5 or weight:dim() ~= 5 or input:size(2) ~= weight:size(1) then
            raise(string.format("tide: %s: expected input {N, Cin, D, H, W} (or unbatched {Cin, " ..
                "D, H, W}) and weight {Cin, Cout / groups, kd, kh, kw} with the same Cin, got " ..
                "%s and %s", who,
                shape_str(input), shape_str(weight)))
        end
        local cout = F._conv_transpose_channels(who, weight, bias, groups)
        local coutg = weight:size(2)
        C.same_device(input, weight, who, "weight")
        I.check_dtype(input, weight, who)
        C.same_device(input, bias, who, "bias")
        float_input(input, who)
        local k = { weight:size(3), weight:size(4), weight:size(5) }
        local s = triple(o.stride, 1, who, "stride", 1)
        local p = triple(o.padding, 0, who, "padding", 0)
        local op = triple(o.output_padding, 0, who, "output_padding", 0)
        local d = triple(o.dilation, 1, who, "dilation", 1)
        for i = 1, 3 do
            if op[i] >= s[i] and op[i] >= d[i] then
                raise(string.format("tide: %s: output_padding %s must be smaller than the " ..
                    "stride %s or the dilation %s", who, commas(op), commas(s), commas(d)))
            end
        end
        local size, out, full = spatial(input), {}, {}
        for i = 1, 3 do
            full[i] = (size[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 -- before padding's crop
            out[i] = full[i] - 2 * p[i] + op[i]
        end
        if out[1] < 1 or out[2] < 1 or out[3] < 1 or full[1] <= p[1] then
            raise(string.format("tide: %s: padding %s leaves no output for input %s", who,
                commas(p), by(size)))
        end
        local n, cin = input:size(1), input:size(2)
        args.check_budget(who, 1.0 * n * cout * out[2] * out[3] * (size[1] * k[1] +
            math.max(full[1], out[1])), 8, ("an output of %s"):format(by(out)),
            "use a smaller stride or dilation")
        local x = input:permute(1, 3, 2, 4, 5):reshape(n * size[1], cin, size[2], size[3])
        local wt = weight:permute(1, 3, 2, 4, 5):reshape(cin, k[1] * coutg, k[2], k[3])
        local z = F.conv_transpose2d(x, wt, nil, { stride = { s[2], s[3] },
            padding = { p[2], p[3] }, output_padding = { op[2], op[3] },
            dilation = { d[2], d[3] }, groups = groups })
        -- z's channels are (group, j, c): to [N, (Cout, H', W', j), D] for fold
        local hw = out[2] * out[3]
        local cols = z:reshape(n, size[1], groups, k[1], coutg, out[2], out[3])
            :permute(1, 3, 5, 6, 7, 4, 2):reshape(n, cout * hw * k[1], size[1])
        local y = F.fold(cols, { full[1], 1 }, { k[1], 1 }, { stride = { s[1], 1 },
            dilation = { d[1], 1 } })
        -- padding crops the depth at both ends, output_padding adds zeros at the back
        y = F.pad(y, { 0, 0, -p[1], op[1] - p[1] })
        y = y:reshape(n, cout, out[2], out[3], out[1]):permute(1, 2, 5, 3, 4)
        if bias then
            y = y:add(bias:view(1, cout, 1, 1, 1))
        end
        return y:contiguous()
    end

    -- ---- pooling ----

    -- input {N, C, D, H, W} or {C, D, H, W}, floating point; returns it as [planes, D, H, W]
    -- and the shape of the result (with od, oh, ow)
    local function planes(input, who)
        tensor_arg(input, who, "input")
        local nd = input:dim()
        if nd ~= 4 and nd ~= 5 then
            raise(string.format("tide: %s: expected input {N, C, D, H, W} or {C, D, H, W}, " ..
                "got %s", who, shape_str(input)))
        end
        float_input(input, who)
        local size = spatial(input)
        local b = 1
        for i = 1, nd - 3 do
            b = b * input:size(i)
        end
        return input:reshape(b, size[1], size[2], size[3]), size
    end

    -- input's leading dims followed by out
    local function out_shape(input, out)
        local shape = input.shape
        local nd = #shape
        shape[nd - 2], shape[nd - 1], shape[nd] = out[1], out[2], out[3]
        return shape
    end

    -- a 3-D pooling's geometry: kernel, stride (default: the kernel), padding, dilation,
    -- ceil_mode, and the output size, with PyTorch's checks
    local function pool_geometry(who, size, kernel_size, o)
        local g = { k = triple(kernel_size, nil, who, "kernel_size", 1) }
        g.s = triple(o.stride, g.k, who, "stride", 1)
        g.p = triple(o.padding, 0, who, "padding", 0)
        g.d = triple(o.dilation, 1, who, "dilation", 1)
        g.ceil = bool_opt(o.ceil_mode, false, who, "ceil_mode")
        local k, p, d = g.k, g.p, g.d
        if 2 * p[1] > k[1] or 2 * p[2] > k[2] or 2 * p[3] > k[3] then
            raise(string.format("tide: %s: padding %s should be at most half the kernel %s",
                who, commas(p), by(k)))
        end
        g.out = {}
        for i = 1, 3 do
            g.out[i] = F._pool_out(size[i], k[i], g.s[i], p[i], d[i], g.ceil)
        end
        if g.out[1] < 1 or g.out[2] < 1 or g.out[3] < 1 then
            local padded = { size[1] + 2 * p[1], size[2] + 2 * p[2], size[3] + 2 * p[3] }
            if is_one(d, 1) then
                raise(string.format("tide: %s: kernel %s is larger than the padded input %s; " ..
                    "use a smaller kernel or more padding", who, by(k), by(padded)))
            end
            local span = {}
            for i = 1, 3 do
                span[i] = d[i] * (k[i] - 1) + 1
            end
            raise(string.format("tide: %s: kernel %s with dilation %s spans %s, larger than " ..
                "the padded input %s; use a smaller kernel, dilation or more padding", who,
                by(k), commas(d), by(span), by(padded)))
        end
        return g
    end

    -- a 3-D pool's arguments checked: its options (opts, checked against `known`), the input as
    -- [planes, D, H, W], its D H W and the pool's geometry (pool_geometry)
    local function pool_args(who, input, kernel_size, opts, known)
        local o = options(opts, who, known)
        local x, size = planes(input, who)
        return o, x, size, pool_geometry(who, size, kernel_size, o)
    end

    -- the kernel and options of the 2-D pooling over H and W that a 3-D pool starts from:
    -- g's, with `extra` (the options of that pool alone) added
    local function hw_pool(g, extra)
        extra.stride, extra.padding = { g.s[2], g.s[3] }, { g.p[2], g.p[3] }
        extra.ceil_mode = g.ceil
        return { g.k[2], g.k[3] }, extra
    end

    -- a 3-D max pool's result: the max over depth windows of y [B, D, oh, ow] (a 2-D
    -- pooling's maxima of each depth of input) and, when wanted, their 1-based flat positions
    -- in D H W, from ix (the 2-D positions in H W), shaped as input with out for D H W: pos
    -- lists the 1-based depths of each of out[1] windows, kd each. A window's first maximum,
    -- or its last NaN, as PyTorch's loop over d, h, w takes them; its value gathered, so the
    -- gradient reaches that element only.
    local function depth_max(y, ix, pos, kd, input, out, want)
        local b, oh, ow, od = y:size(1), y:size(3), y:size(4), out[1]
        local at = autograd.is_tensor(pos) and pos:reshape(od * kd):to(y.device) or
            core.tensor(pos, { dtype = "int64", device = y.device })
        local win = y:index_select(2, at):reshape(b, od, kd, oh, ow)
        local _, first = win:max(3, true)
        local order = core.arange(1, kd + 1, { dtype = "int64", device = y.device })
            :view(1, 1, kd, 1, 1)
        local last_nan = win:ne(win):long():mul(order):max(3, true)
        local idx = core.where(last_nan:gt(0), last_nan, first)
        local val = win:gather(3, idx):squeeze(3)
        local shape = out_shape(input, out)
        if not want then
            return val:reshape(shape)
        end
        local size = spatial(input)
        local cell = ix:index_select(2, at):reshape(b, od, kd, oh, ow):gather(3, idx)
        local depth = at:view(1, od, kd, 1, 1):expand(b, od, kd, oh, ow):gather(3, idx)
        local flat = depth:sub(1):mul(size[2] * size[3]):add(cell):squeeze(3)
        return val:reshape(shape), flat:reshape(shape)
    end

    -- max over each window of input {N, C, D, H, W} or {C, D, H, W}; {stride = kernel_size,
    -- padding = 0, dilation = 1, ceil_mode = false, return_indices = false}; indices 1-based
    -- flat positions (d - 1) H W + (h - 1) W + w within each plane, PyTorch's plus one.
    -- max_pool2d over H and W of each depth, then the max over each depth window.
    function F.max_pool3d(input, kernel_size, opts)
        local who = "max_pool3d"
        local o, x, size, g = pool_args(who, input, kernel_size, opts, { "stride", "padding",
            "dilation", "ceil_mode", "return_indices" })
        local want = bool_opt(o.return_indices, false, who, "return_indices")
        local y, ix = F.max_pool2d(x, hw_pool(g, { dilation = { g.d[2], g.d[3] },
            return_indices = true }))
        -- window o's depths o s + j d - p inside the input, in order (those in the padding add
        -- nothing), each window's list filled up to the longest by repeating its last depth
        -- (which changes neither the first maximum nor the last NaN)
        local od, n, s, dl, p = g.out[1], size[1], g.s[1], g.d[1], g.p[1]
        local lists, kd = {}, 1
        for i = 0, od - 1 do
            local base = i * s - p
            local jlo = math.max(0, -idiv(base, dl)) -- the first j with base + j d >= 0
            local jhi = math.min(g.k[1] - 1, idiv(n - 1 - base, dl))
            lists[i + 1] = { base, jlo, jhi }
            kd = math.max(kd, jhi - jlo + 1)
        end
        args.check_budget(who, 1.0 * x:size(1) * od * kd * g.out[2] * g.out[3], 8,
            ("windows of %d depths at %d x %d x %d outputs per plane"):format(kd, od,
            g.out[2], g.out[3]), "use a smaller kernel or a larger stride")
        local pos = {}
        for i = 1, od do
            local base, jlo, jhi = lists[i][1], lists[i][2], lists[i][3]
            for j = jlo, jlo + kd - 1 do
                -- no depth inside (a dilated window over the padding): PyTorch's -inf, not here
                local q = jhi >= jlo and base + math.min(j, jhi) * dl or 0
                pos[#pos + 1] = q + 1
            end
        end
        return depth_max(y, ix, pos, kd, input, g.out, want)
    end

    -- the [od, D] matrix that sums each depth window's cells inside the input
    local function window_sums(g, size, like)
        local m = {}
        for i = 0, g.out[1] - 1 do
            local row = {}
            for q = 0, size[1] - 1 do
                row[q + 1] = 0
            end
            local lo = i * g.s[1] - g.p[1]
            for q = math.max(lo, 0), math.min(lo + g.k[1], size[1]) - 1 do
                row[q + 1] = 1
            end
            m[i + 1] = row
        end
        return core.tensor(m, { dtype = like.dtype, device = like.device })
    end

    -- PyTorch's divisor of each window along one dim: the cells of the padded input it covers
    -- (count_include_pad), or those of the input itself
    local function counts(n, k, s, p, out, include_pad)
        local c = {}
        for i = 0, out - 1 do
            local lo = i * s - p
            local hi = math.min(lo + k, n + p)
            c[i + 1] = include_pad and hi - lo or math.min(hi, n) - math.max(lo, 0)
        end
        return c
    end

    -- mean over each window of input {N, C, D, H, W} or {C, D, H, W}; {stride = kernel_size,
    -- padding = 0, ceil_mode = false, count_include_pad = true, divisor_override =}: avg_pool2d's
    -- sums over H and W of each depth, summed over each depth window, divided by PyTorch's
    -- count (or divisor_override)
    function F.avg_pool3d(input, kernel_size, opts)
        local who = "avg_pool3d"
        local o, x, size, g = pool_args(who, input, kernel_size, opts, { "stride", "padding",
            "ceil_mode", "count_include_pad", "divisor_override" })
        local include_pad, divisor = F._avg_divisor_args(who, o)
        local b, out = x:size(1), g.out
        local sums = F.avg_pool2d(x, hw_pool(g, { divisor_override = 1 }))
        sums = window_sums(g, size, x):matmul(sums:reshape(b, size[1], out[2] * out[3]))
        local y
        if divisor ~= nil then
            y = sums:div(divisor)
        else
            local cd = counts(size[1], g.k[1], g.s[1], g.p[1], out[1], include_pad)
            local ch = counts(size[2], g.k[2], g.s[2], g.p[2], out[2], include_pad)
            local cw = counts(size[3], g.k[3], g.s[3], g.p[3], out[3], include_pad)
            local div = {}
            for i = 1, out[1] do
                for j = 1, out[2] do
                    for l = 1, out[3] do
                        div[#div + 1] = cd[i] * ch[j] * cw[l]
                    end
                end
            end
            y = sums:div(core.tensor(div, { dtype = x.dtype, device = x.device })
                :view(out[1], out[2] * out[3]))
        end
        return y:reshape(out_shape(input, out))
    end

    -- output_size an integer or {d, h, w} (nil, or a hole, keeps that size), each >= 0 (0: an
    -- empty output); every dim of input but the batch non-empty (PyTorch 1.13)
    local function adaptive_out(who, size, output_size, input)
        F._adaptive_nonempty(who, input, 2)
        local out = {}
        for i = 1, 3 do
            local v = output_size
            if type(output_size) == "table" and not autograd.is_tensor(output_size) then
                v = output_size[i]
                if v == nil then
                    v = size[i]
                end
            end
            if not compat.is_integer(v) or v < 0 then
                raise(string.format("tide: %s: expected output_size to be an integer >= 0 or " ..
                    "{d, h, w} of them (nil keeps a size), got %s", who, T.show(output_size)))
            end
            out[i] = v
        end
        return out
    end

    -- input {N, C, D, H, W} or {C, D, H, W} to output_size (an integer or {d, h, w}, nil
    -- keeping a size): the mean of PyTorch's adaptive windows, which are separable:
    -- adaptive_avg_pool2d over H and W, then over D
    function F.adaptive_avg_pool3d(input, output_size)
        local who = "adaptive_avg_pool3d"
        local x, size = planes(input, who)
        local out = adaptive_out(who, size, output_size, input)
        local b = x:size(1)
        args.check_budget(who, 1.0 * b * (out[1] + size[1]) * out[2] * out[3], 8,
            ("an output of %s per plane"):format(by(out)), "ask for a smaller output_size")
        if out[1] * out[2] * out[3] == 0 then -- output_size 0: an empty output
            return core.zeros(out_shape(input, out), { dtype = input.dtype, device = input.device })
        end
        local y = F.adaptive_avg_pool2d(x, { out[2], out[3] })
        if out[1] ~= size[1] then -- [B, D, oh ow] as {C, H, W}: its H is the depth
            y = F.adaptive_avg_pool2d(y:reshape(b, size[1], out[2] * out[3]),
                { out[1], out[2] * out[3] })
        end
        return y:reshape(out_shape(input, out))
    end

    -- input {N, C, D, H, W} or {C, D, H, W} to output_size; {return_indices = false}: also the
    -- 1-based flat positions in D H W. adaptive_max_pool2d over H and W, then the max over
    -- each adaptive depth window (the shorter windows repeat their last depth)
    function F.adaptive_max_pool3d(input, output_size, opts)
        local who = "adaptive_max_pool3d"
        local o = options(opts, who, { "return_indices" })
        local want = bool_opt(o.return_indices, false, who, "return_indices")
        local x, size = planes(input, who)
        local out = adaptive_out(who, size, output_size, input)
        args.check_budget(who, 1.0 * x:size(1) * out[1] * out[2] * out[3] + out[1], 8,
            ("an output of %s per plane"):format(by(out)), "ask for a smaller output_size")
        if out[1] * out[2] * out[3] == 0 then -- output_size 0: empty results
            local shape = out_shape(input, out)
            local y = core.zeros(shape, { dtype = input.dtype, device = input.device })
            if want then
                return y, core.zeros(shape, { dtype = "int64", device = input.device })
            end
            return y
        end
        local y, ix = F.adaptive_max_pool2d(x, { out[2], out[3] }, { return_indices = true })
        -- window i covers depths floor(i D / od) .. ceil((i + 1) D / od) - 1 (0-based), each
        -- listed kd long (the shorter repeat their last), built by tensor ops as adaptive_matrix
        local n, od = size[1], out[1]
        local i = core.arange(0, od, { dtype = "int64" })
        local lo = (i * n):floor_divide(od)
        local hi = ((i + 1) * n + (od - 1)):floor_divide(od)
        local kd = (hi - lo):max():item()
        args.check_budget(who, 1.0 * x:size(1) * od * kd * out[2] * out[3], 8,
            ("windows of %d depths at %d x %d x %d outputs per plane"):format(kd, od, out[2],
            out[3]), "ask for a smaller output_size")
        local j = core.arange(0, kd, { dtype = "int64" })
        local pos = core.minimum(lo:view(od, 1) + j:view(1, kd), (hi - 1):view(od, 1)):add(1)
        return depth_max(y, ix, pos, kd, input, out, want)
    end

    -- ---- dropout ----

    -- {p = 0.5, training = true, inplace = false}: in training, zeroes whole channels of
    -- {N, C, D, H, W} or {C, D, H, W} with probability p and scales the rest by 1/(1-p); the
    -- input itself otherwise
    function F.dropout3d(input, opts)
        return C.feature_dropout(input, opts, "dropout3d", 3,
            "{N, C, D, H, W} or {C, D, H, W} (channels of three spatial dims)")
    end
end
