-- More pooling for tide.nn.functional, PyTorch 1.13's windows: adaptive_max_pool1d / 2d,
-- avg_pool1d, adaptive_avg_pool1d (the 1-D ones run the 2-D ones on a height of 1), unfold /
-- fold (im2col and its adjoint col2im), lp_pool1d / 2d and max_unpool1d / 2d / 3d. Required from
-- the end of functional.lua; its argument checks are tide.nn._args (C).
local compat = require("tide._compat")
local idiv = compat.idiv
local core = require("tide.core")
local K = core._internal
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local I = require("tide.nn._internal")
local raise = autograd.raise

-- PyTorch's adaptive windows over size cells into out (window i covers floor(i size / out) ..
-- ceil((i + 1) size / out) - 1, 0-based): their starts and ends, int64 tensors on the CPU, and
-- the longest one's length k. Tensor arithmetic, not a Lua loop: size and out may be huge
local function window_bounds(size, out)
    local i = core.arange(0, out, { dtype = "int64" })
    local s = i:mul(size):floor_divide(out)
    local e = i:add(1):mul(size):neg():floor_divide(out):neg()
    return s, e, e:sub(s):max():item()
end

-- [out * k] 1-based positions of the windows, each k long: the shorter ones repeat their last
-- cell, which changes neither a maximum nor its first position
local function window_positions(s, e, k, out, device)
    local j = core.arange(0, k, { dtype = "int64" })
    return core.minimum(s:view(out, 1):add(j:view(1, k)), e:sub(1):view(out, 1)):add(1)
        :reshape(out * k):to(device)
end

local C = require("tide.nn._args")

return function(F)
    local tensor_arg, options, int_arg, bool_opt = C.tensor_arg, C.options, C.int_arg, C.bool_opt
    local shape_str = C.shape_str

    local function float_input(input, who)
        if not C.FLOAT_DTYPES[input.dtype] then
            raise("tide: " .. who .. ": expected a floating-point input, got " .. input.dtype)
        end
    end

    -- the input's last two dims and the output size (nil in a table: keep; 0: empty); every
    -- dim but the batch non-empty (PyTorch 1.13's max pools)
    local function adaptive_sizes(input, output_size, who)
        local nd = input:dim()
        local h, w = input:size(nd - 1), input:size(nd)
        F._adaptive_nonempty(who, input, 2)
        local oh, ow
        if type(output_size) == "table" then
            oh, ow = output_size[1] or h, output_size[2] or w
        else
            oh, ow = output_size, output_size
        end
        int_arg(oh, who, "output_size", 0)
        int_arg(ow, who, "output_size", 0)
        return h, w, oh, ow
    end

    -- the max of each adaptive window of input [..., H, W] to [..., oh, ow], and the 1-based
    -- flat position (h - 1) W + w of each: the first maximum in the window's row-major order,
    -- or its last NaN (PyTorch's kernel takes every NaN it meets). The windows are gathered
    -- ([..., oh, ow, kh * kw]) and each result taken from them by its position, so the
    -- gradient reaches that element only.
    local function adaptive_max(who, input, h, w, oh, ow)
        local nd = input:dim()
        local lead = input.shape
        lead[nd - 1], lead[nd] = nil, nil
        local planes = 1
        for i = 1, #lead do
            planes = planes * lead[i]
        end
        local out_shape = { compat.unpack(lead) }
        out_shape[#lead + 1], out_shape[#lead + 2] = oh, ow
        if planes * oh * ow == 0 then -- no windows (a 0 batch or output_size): empty results
            local corner = input:narrow(nd - 1, 1, 1):narrow(nd, 1, 1)
            return corner:expand(out_shape):contiguous(),
                core.zeros(out_shape, { dtype = "int64", device = input.device })
        end
        args.check_budget(who, 1.0 * planes * oh * ow, 8, ("%d x %d outputs per plane"):format(oh,
            ow), "ask for a smaller output_size")
        local sh, eh, kh = window_bounds(h, oh)
        local sw, ew, kw = window_bounds(w, ow)
        args.check_budget(who, 1.0 * planes * oh * ow * kh * kw + 1.0 * oh * kh + ow * kw, 8,
            ("windows of %d x %d at %d x %d outputs per plane"):format(kh, kw, oh, ow),
            "ask for a smaller output_size")
        local ph = window_positions(sh, eh, kh, oh, input.device)
        local pw = window_positions(sw, ew, kw, ow, input.device)
        local shape = { compat.unpack(lead) }
        local n = #lead
        shape[n + 1], shape[n + 2], shape[n + 3], shape[n + 4] = oh, kh, ow, kw
        local perm = {}
        for i = 1, n do
            perm[i] = i
        end
        perm[n + 1], perm[n + 2], perm[n + 3], perm[n + 4] = n + 1, n + 3, n + 2, n + 4
        local flat = { compat.unpack(lead) }
        flat[n + 1], flat[n + 2], flat[n + 3] = oh, ow, kh * kw
        local win = input:index_select(nd - 1, ph):index_select(nd, pw):reshape(shape)
            :permute(perm):reshape(flat)
        local _, first = win:max(n + 3, true)
        local k = kh * kw
        local at = core.arange(1, k + 1, { dtype = "int64", device = input.device })
        local last_nan = win:ne(win):long():mul(at):max(n + 3, true)
        local idx = core.where(last_nan:gt(0), last_nan, first)
        local out = win:gather(n + 3, idx):squeeze(n + 3)
        local cell = ph:view(oh, 1, kh, 1):sub(1):mul(w):add(pw:view(1, ow, 1, kw))
            :reshape(oh, ow, k):expand(flat)
        return out, cell:gather(n + 3, idx):squeeze(n + 3)
    end

    local function return_indices(opts, who)
        local o = options(opts, who, { "return_indices" })
        return bool_opt(o.return_indices, false, who, "return_indices")
    end

    -- input [N, C, H, W] or [C, H, W] to output_size (an integer or {h, w}, nil keeping a
    -- size); {return_indices = false}: also the 1-based flat positions (h - 1) W + w
    function F.adaptive_max_pool2d(input, output_size, opts)
        local who = "adaptive_max_pool2d"
        tensor_arg(input, who, "input")
        local want = return_indices(opts, who)
        if input:dim() ~= 3 and input:dim() ~= 4 then
            raise("tide: adaptive_max_pool2d: expected input {N, C, H, W} or {C, H, W}, got " ..
                shape_str(input))
        end
        float_input(input, who)
        local out, idx = adaptive_max(who, input, adaptive_sizes(input, output_size, who))
        if want then
            return out, idx
        end
        return out
    end

    -- input [N, C, L] or [C, L] to output_size (an integer); indices: 1-based positions in L
    function F.adaptive_max_pool1d(input, output_size, opts)
        local who = "adaptive_max_pool1d"
        tensor_arg(input, who, "input")
        local want = return_indices(opts, who)
        local nd = input:dim()
        if nd ~= 2 and nd ~= 3 then
            raise("tide: adaptive_max_pool1d: expected input {N, C, L} or {C, L}, got " ..
                shape_str(input))
        end
        float_input(input, who)
        if type(output_size) == "table" and #output_size == 1 then
            output_size = output_size[1]
        end
        int_arg(output_size, who, "output_size", 0)
        F._adaptive_nonempty(who, input, 2)
        local x = input:unsqueeze(nd)
        local h, w, oh, ow = adaptive_sizes(x, { 1, output_size }, who)
        local out, idx = adaptive_max(who, x, h, w, oh, ow)
        if want then
            return out:squeeze(nd), idx:squeeze(nd)
        end
        return out:squeeze(nd)
    end

    -- input [N, C, L] or [C, L] to output_size (an integer): adaptive_avg_pool2d on a height
    -- of 1, as PyTorch
    function F.adaptive_avg_pool1d(input, output_size)
        local who = "adaptive_avg_pool1d"
        tensor_arg(input, who, "input")
        local nd = input:dim()
        if nd ~= 2 and nd ~= 3 then
            raise("tide: adaptive_avg_pool1d: expected input {N, C, L} or {C, L}, got " ..
                shape_str(input))
        end
        if type(output_size) == "table" and #output_size == 1 then
            output_size = output_size[1]
        end
        int_arg(output_size, who, "output_size", 0)
        float_input(input, who)
        F._adaptive_nonempty(who, input, nd)
        return F.adaptive_avg_pool2d(input:unsqueeze(nd), { 1, output_size }):squeeze(nd)
    end

    -- the mean of each window of input [N, C, L] or [C, L]; {stride = kernel_size, padding = 0,
    -- ceil_mode = false, count_include_pad = true}: avg_pool2d on a height of 1, as PyTorch
    function F.avg_pool1d(input, kernel_size, opts)
        local who = "avg_pool1d"
        tensor_arg(input, who, "input")
        local o = options(opts, who, { "stride", "padding", "ceil_mode", "count_include_pad" })
        local nd = input:dim()
        if nd ~= 2 and nd ~= 3 then
            raise("tide: avg_pool1d: expected input {N, C, L} or {C, L}, got " ..
                shape_str(input))
        end
        float_input(input, who)
        if type(kernel_size) == "table" and #kernel_size == 1 then
            kernel_size = kernel_size[1]
        end
        local k = int_arg(kernel_size, who, "kernel_size", 1)
        -- PyTorch's 1-tuples: stride=(2,), padding=(1,)
        local s = int_arg(I.single(o.stride, "stride", who) or k, who, "stride", 1)
        local p = int_arg(I.single(o.padding, "padding", who) or 0, who, "padding", 0)
        if 2 * p > k then
            raise(string.format("tide: avg_pool1d: padding %d should be at most half the " ..
                "kernel %d", p, k))
        end
        local l = input:size(nd)
        local ceil = bool_opt(o.ceil_mode, false, who, "ceil_mode")
        -- no window fits (with ceil_mode, none starts inside the input: PyTorch's size rule)
        if l + 2 * p - k + (ceil and s - 1 or 0) < 0 then
            raise(string.format("tide: avg_pool1d: kernel %d is larger than the padded input " ..
                "%d; use a smaller kernel or more padding", k, l + 2 * p))
        end
        local include_pad = bool_opt(o.count_include_pad, true, who, "count_include_pad")
        local x = nd == 2 and input:unsqueeze(1) or input
        local y = F.avg_pool2d(x:unsqueeze(3), { 1, k }, { stride = { 1, s }, padding = { 0, p },
            ceil_mode = ceil, count_include_pad = include_pad }):squeeze(3)
        return nd == 2 and y:squeeze(1) or y
    end

    -- unfold / fold's geometry: kernel_size and the options dilation (1), padding (0) and
    -- stride (1), each an integer or {h, w}
    local function geometry(kernel_size, opts, who)
        local o = options(opts, who, { "dilation", "padding", "stride" })
        local kh, kw = C.pair_opt(kernel_size, nil, who, "kernel_size", 1)
        local dh, dw = C.pair_opt(o.dilation, 1, who, "dilation", 1)
        local ph, pw = C.pair_opt(o.padding, 0, who, "padding", 0)
        local sh, sw = C.pair_opt(o.stride, 1, who, "stride", 1)
        return { kh, kw, sh, sw, ph, pw, dh, dw }
    end

    -- the number of blocks along a dim of size n, or an error naming the dim
    local function blocks(g, h, w, who)
        local bh = idiv(h + 2 * g[5] - g[7] * (g[1] - 1) - 1, g[3]) + 1
        local bw = idiv(w + 2 * g[6] - g[8] * (g[2] - 1) - 1, g[4]) + 1
        if bh < 1 or bw < 1 then
            raise(string.format("tide: %s: the kernel %dx%d (dilation %d,%d) does not fit in " ..
                "the padded input %dx%d; use a smaller kernel or more padding", who, g[1], g[2],
                g[7], g[8], h + 2 * g[5], w + 2 * g[6]))
        end
        return bh, bw
    end

    -- unfold(input [N, C, H, W] or unbatched [C, H, W], kernel_size[, {dilation =, padding =,
    -- stride =}]): the sliding blocks as columns [N, C kh kw, L] (im2col; [C kh kw, L]
    -- unbatched), L the number of blocks
    function F.unfold(input, kernel_size, opts)
        local who = "unfold"
        tensor_arg(input, who, "input")
        local g = geometry(kernel_size, opts, who)
        if input:dim() == 3 then -- PyTorch's unbatched input: a batch of one
            return F.unfold(input:unsqueeze(1), kernel_size, opts):squeeze(1)
        elseif input:dim() ~= 4 then
            raise("tide: unfold: expected 4-D input {N, C, H, W} (or 3-D {C, H, W}), got " ..
                shape_str(input))
        end
        float_input(input, who)
        blocks(g, input:size(3), input:size(4), who)
        return K.im2col(input, g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8])
    end

    -- fold(input [N, C kh kw, L] or unbatched [C kh kw, L], output_size, kernel_size[,
    -- {dilation =, padding =, stride =}]): each column added back into its block of an
    -- [N, C, H, W] output ([C, H, W] unbatched; col2im, the adjoint of unfold)
    function F.fold(input, output_size, kernel_size, opts)
        local who = "fold"
        tensor_arg(input, who, "input")
        local g = geometry(kernel_size, opts, who)
        local h, w = C.pair_opt(output_size, nil, who, "output_size", 1)
        if input:dim() == 2 then -- PyTorch's unbatched input: a batch of one
            return F.fold(input:unsqueeze(1), output_size, kernel_size, opts):squeeze(1)
        elseif input:dim() ~= 3 then
            raise("tide: fold: expected 3-D input {N, C * kh * kw, L} (or 2-D {C * kh * kw, " ..
                "L}), got " .. shape_str(input))
        end
        float_input(input, who)
        local k = g[1] * g[2]
        if input:size(2) % k ~= 0 then
            raise(string.format("tide: fold: expected dim 2 of input %s to be divisible by the " ..
                "kernel's %d x %d = %d cells", shape_str(input), g[1], g[2], k))
        end
        local bh, bw = blocks(g, h, w, who)
        if input:size(3) ~= bh * bw then
            raise(string.format("tide: fold: expected dim 3 of input %s to be the number of " ..
                "blocks %d x %d = %d (output_size %dx%d)", shape_str(input), bh, bw, bh * bw, h,
                w))
        end
        local y = K.col2im(input:detach(), idiv(input:size(2), k), h, w, g[1], g[2], g[3], g[4],
            g[5], g[6], g[7], g[8])
        if autograd.needs_record(input) then
            autograd.record("col2im", y, input).geom = g
        end
        return y
    end

    -- lp_pool1d / lp_pool2d(input, norm_type, kernel_size[, {stride =, ceil_mode = false}]):
    -- the p-norm of each window, PyTorch's composition: avg_pool of x^p, times the window's
    -- cells, to the power 1/p (sign(out) relu(|out|) in between, as PyTorch writes it, so the
    -- gradient matches at 0)
    local function lp_pool(who, input, norm_type, kernel_size, opts, dims)
        tensor_arg(input, who, "input")
        if type(norm_type) ~= "number" or norm_type ~= norm_type or norm_type == 0 then
            raise(string.format("tide: %s: norm_type must be a non-zero number, got %s", who,
                tostring(norm_type)))
        end
        local o = options(opts, who, { "stride", "ceil_mode" })
        float_input(input, who)
        local out, cells
        if dims == 1 then
            local k = int_arg(type(kernel_size) == "table" and #kernel_size == 1 and
                kernel_size[1] or kernel_size, who, "kernel_size", 1)
            cells = k
            out = args.as_op(who, "avg_pool1d", F.avg_pool1d, input:pow(norm_type), k,
                { stride = o.stride, ceil_mode = o.ceil_mode })
        else
            local kh, kw = C.pair_opt(kernel_size, nil, who, "kernel_size", 1)
            cells = kh * kw
            local x = input:dim() == 3 and input:unsqueeze(1) or input
            out = args.as_op(who, "avg_pool2d", F.avg_pool2d, x:pow(norm_type), { kh, kw },
                { stride = o.stride, ceil_mode = o.ceil_mode })
            out = input:dim() == 3 and out:squeeze(1) or out
        end
        return out:sign():mul(out:abs():relu()):mul(cells):pow(1 / norm_type)
    end
    function F.lp_pool1d(input, norm_type, kernel_size, opts)
        return lp_pool("lp_pool1d", input, norm_type, kernel_size, opts, 1)
    end
    function F.lp_pool2d(input, norm_type, kernel_size, opts)
        return lp_pool("lp_pool2d", input, norm_type, kernel_size, opts, 2)
    end

    -- max_unpool1d / 2d / 3d(input, indices, kernel_size[, {stride = kernel_size,
    -- padding = 0, output_size =}]): each value of input put at its 1-based position (within
    -- its plane) in indices, as max_pool's return_indices gives them, the rest 0. The output is
    -- (in - 1) stride - 2 padding + kernel along each dim unless output_size says otherwise
    -- (within a stride of that, as PyTorch checks).
    local function max_unpool(who, input, indices, kernel_size, opts, dims)
        tensor_arg(input, who, "input")
        tensor_arg(indices, who, "indices")
        local o = options(opts, who, { "stride", "padding", "output_size" })
        local nd = input:dim()
        if nd ~= dims + 1 and nd ~= dims + 2 then
            local names = ({ "L", "H, W", "D, H, W" })[dims]
            raise(string.format("tide: %s: expected input {N, C, %s} or {C, %s}, got %s", who,
                names, names, shape_str(input)))
        end
        if indices.dtype ~= "int64" or not args.same_shape(indices.shape, input.shape) then
            raise(string.format("tide: %s: expected int64 indices of the input's shape %s " ..
                "(max_pool's return_indices), got %s %s", who, shape_str(input),
                indices.dtype, shape_str(indices)))
        end
        C.same_device(input, indices, who, "indices")
        local k, s, p = {}, {}, {}
        if dims == 1 then
            local one = function(v) return type(v) == "table" and #v == 1 and v[1] or v end
            k[1] = int_arg(one(kernel_size), who, "kernel_size", 1)
            s[1] = int_arg(one(o.stride or k[1]), who, "stride", 1)
            p[1] = int_arg(one(o.padding or 0), who, "padding", 0)
        elseif dims == 2 then
            k[1], k[2] = C.pair_opt(kernel_size, nil, who, "kernel_size", 1)
            s[1], s[2] = C.pair_opt(o.stride, { k[1], k[2] }, who, "stride", 1)
            p[1], p[2] = C.pair_opt(o.padding, 0, who, "padding", 0)
        else
            local T = require("tide.nn._args3d")
            k = T.triple(kernel_size, nil, who, "kernel_size", 1)
            s = T.triple(o.stride, k, who, "stride", 1)
            p = T.triple(o.padding, 0, who, "padding", 0)
        end
        local sizes, cells = {}, 1
        local given = o.output_size
        if given ~= nil and (type(given) ~= "table" or #given < dims) then
            raise(string.format("tide: %s: output_size must list the %d last sizes, got %s",
                who, dims, tostring(given)))
        end
        for d = 1, dims do
            local n_in = input:size(nd - dims + d)
            local default = (n_in - 1) * s[d] - 2 * p[d] + k[d]
            local want = given and given[#given - dims + d] or default
            if not compat.is_integer(want) or want < default - s[d] or want > default + s[d] then
                raise(string.format("tide: %s: output_size %s is outside %d..%d for dim %d " ..
                    "(input %s, kernel %d, stride %d, padding %d)", who, tostring(want),
                    default - s[d], default + s[d], nd - dims + d, shape_str(input), k[d], s[d],
                    p[d]))
            end
            sizes[d], cells = want, cells * want
        end
        local lead = {}
        for d = 1, nd - dims do
            lead[d] = input:size(d)
        end
        local flat_shape = { compat.unpack(lead) }
        flat_shape[#flat_shape + 1] = -1
        local out_flat = { compat.unpack(lead) }
        out_flat[#out_flat + 1] = cells
        local zeros = core.zeros(out_flat, { dtype = input.dtype, device = input.device })
        local out = args.as_op(who, "scatter", zeros.scatter, zeros, #out_flat,
            indices:reshape(flat_shape), input:reshape(flat_shape))
        local shape = { compat.unpack(lead) }
        for d = 1, dims do
            shape[#shape + 1] = sizes[d]
        end
        return out:reshape(shape)
    end
    function F.max_unpool1d(input, indices, kernel_size, opts)
        return max_unpool("max_unpool1d", input, indices, kernel_size, opts, 1)
    end
    function F.max_unpool2d(input, indices, kernel_size, opts)
        return max_unpool("max_unpool2d", input, indices, kernel_size, opts, 2)
    end
    -- sizes an integer or {d, h, w}; indices the 1-based flat positions in D H W
    function F.max_unpool3d(input, indices, kernel_size, opts)
        return max_unpool("max_unpool3d", input, indices, kernel_size, opts, 3)
    end
end
