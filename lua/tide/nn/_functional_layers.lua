-- More layers for tide.nn.functional, as PyTorch 1.13 computes them: instance_norm, dropout1d,
-- alpha_dropout, channel_shuffle, bilinear, conv_transpose1d (conv_transpose2d on a height of
-- 1), local_response_norm and embedding_bag. Required from the end of functional.lua; its argument checks are tide.nn._args (C).
local idiv = require("tide._compat").idiv
local core = require("tide.core")
local autocast = require("tide._autocast")
local autograd = require("tide.autograd")
local I = require("tide.nn._internal")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local args = require("tide.op_args")

local C = require("tide.nn._args")

-- embedding_bag's mode "max" as PyTorch's: per bag and column, a fold over the bag's lookups in
-- order, padding_idx's left out, that takes the first and then each one greater than what it
-- holds, so a NaN counts only as the first (later ones compare false) and the first of equals
-- stays (0.0 before -0.0); an empty bag gives 0, and the gradient goes to the lookup taken
-- last. (A scatter_reduce "amax" cost 80x PyTorch's time, and spread NaN.)

-- that pick over a grid [L, bags, width], bag b's i-th lookup at [i, b], filled [L, bags] (bool;
-- nil: all) the places holding a kept one: for a short L, the fold itself, a step a place (the
-- gradient through where); else the max along L, which takes the first of equals, once each
-- NaN but a bag's first and each empty place is -inf (the gradient through gather)
local function first_max(grid, filled)
    local L, bags, width = grid:size(1), grid:size(2), grid:size(3)
    local dev = grid.device
    if L <= 16 then
        local out = core.zeros({ bags, width }, { dtype = grid.dtype, device = dev })
        local empty = filled and core.ones({ bags, 1 }, { dtype = "bool", device = dev })
        for j = 1, L do
            local v = grid[j]
            if not filled then
                out = j == 1 and v or core.where(v:gt(out), v, out)
            else
                local k = filled[j]:view(bags, 1)
                out = core.where(k:logical_and(empty:logical_or(v:gt(out))), v, out)
                empty = empty:logical_and(k:logical_not())
            end
        end
        return out
    end
    local first, empty = autograd.no_grad(function()
        if not filled then
            return core.arange(1, L + 1, { dtype = "int64", device = dev }):eq(1):view(L, 1, 1)
        end
        local c = filled:to("int64"):cumsum(1)
        return filled:logical_and(c:eq(1)):view(L, bags, 1), c[L]:eq(0):view(bags, 1)
    end)
    local drop = grid:isnan():logical_and(first:logical_not())
    if filled then
        drop = drop:logical_or(filled:logical_not():view(L, bags, 1))
    end
    local clean = core.where(drop, -math.huge, grid)
    local _, at = autograd.no_grad(function() return clean:max(1) end)
    local out = clean:gather(1, at:view(1, bags, width)):view(bags, width)
    return empty and core.where(empty, 0, out) or out
end

-- rows [n, width]: the lookups bag by bag, kept ([n] bool) nil without padding_idx, L the
-- longest bag's length, lens the bags' lengths (nil: L each), starts their 1-based first
-- lookups, bag ([n]) each lookup's 1-based bag. Bags of unequal lengths go to a grid of L
-- places each, unless that exceeds 4 n places: then one bag at a time.
local function bag_max(rows, kept, bags, L, lens, starts, bag)
    local n, width, dev = rows:size(1), rows:size(2), rows.device
    local unequal = false
    for i = 2, lens and bags or 0 do
        unequal = unequal or lens[i] ~= lens[1]
    end
    if not unequal then
        return first_max(rows:view(bags, L, width):transpose(1, 2),
            kept and kept:view(bags, L):t())
    end
    if L * bags > 4 * n + 4096 then
        local outs = {}
        for i = 1, bags do
            local len = lens[i]
            outs[i] = len == 0 and core.zeros({ 1, width }, { dtype = rows.dtype, device = dev })
                or first_max(rows:narrow(1, starts[i], len):view(len, 1, width),
                    kept and kept:narrow(1, starts[i], len):view(len, 1))
        end
        return core.cat(outs, 1)
    end
    local long = { dtype = "int64", device = dev }
    local first = core.tensor(starts, long):narrow(1, 1, bags)
    -- lookup j, the i-th of bag b, to row (i - 1) * bags + b
    local slot = (core.arange(1, n + 1, long) - first:index_select(1, bag)) * bags + bag
    local grid = core.full({ L * bags, width }, -1 / math.huge, { dtype = rows.dtype,
        device = dev }):index_add(1, slot, rows) -- (-0.0 + v is v)
    local filled = core.zeros({ L * bags }, long):index_add(1, slot,
        kept and kept:to("int64") or core.ones({ n }, long)):gt(0)
    return first_max(grid:view(L, bags, width), filled:view(L, bags))
end

return function(F)
    local tensor_arg, optional_tensor, options = C.tensor_arg, C.optional_tensor, C.options
    local number_opt, bool_opt, int_arg = C.number_opt, C.bool_opt, C.int_arg
    local shape_str, same_device = C.shape_str, C.same_device

    -- instance_norm(input[, running_mean, running_var][, {weight =, bias =, use_input_stats =
    -- true, momentum = 0.1, eps = 1e-5}]): each (sample, channel) plane of input [N, C, *]
    -- normalized by its own mean and biased variance, as PyTorch's: batch_norm over the input
    -- viewed as [1, N C, *], the running estimates (when given) repeated N times, updated, then
    -- averaged back over the batch; with use_input_stats = false the running estimates
    -- normalize instead
    function F.instance_norm(input, running_mean, running_var, opts)
        local who = "instance_norm"
        tensor_arg(input, who, "input")
        if opts == nil and type(running_mean) == "table" and not is_tensor(running_mean) then
            opts, running_mean = running_mean, nil
        end
        optional_tensor(running_mean, who, "running_mean")
        optional_tensor(running_var, who, "running_var")
        local o = options(opts, who, { "weight", "bias", "use_input_stats", "momentum", "eps" })
        local use_input_stats = bool_opt(o.use_input_stats, true, who, "use_input_stats")
        local momentum = number_opt(o.momentum, 0.1, who, "momentum")
        local eps = number_opt(o.eps, 1e-5, who, "eps")
        local weight = optional_tensor(o.weight, who, "weight")
        local bias = optional_tensor(o.bias, who, "bias")
        if input:dim() < 3 then
            raise("tide: instance_norm: expected input {N, C, ...} with at least one spatial " ..
                "dim, got " .. shape_str(input))
        end
        if (running_mean == nil) ~= (running_var == nil) then
            raise("tide: instance_norm: pass both running_mean and running_var, or neither")
        end
        if not use_input_stats and running_mean == nil then
            raise("tide: instance_norm: running_mean and running_var are needed when " ..
                "use_input_stats is false; pass them, or leave use_input_stats true")
        end
        local n, c = input:size(1), input:size(2)
        C.channel_tensors(who, input, c, { { running_mean, "running_mean" },
            { running_var, "running_var" }, { weight, "weight" }, { bias, "bias" } })
        for _, t in ipairs({ { running_mean, "running_mean" }, { running_var, "running_var" },
            { weight, "weight" }, { bias, "bias" } }) do
            I.check_norm_dtype(input, t[1], who, t[2])
        end
        local spatial = 1
        for d = 3, input:dim() do
            spatial = spatial * input:size(d)
        end
        if use_input_stats and spatial == 1 then
            raise("tide: instance_norm: expected more than 1 spatial element when using the " ..
                "input's statistics, got input " .. shape_str(input))
        end
        -- float16/bfloat16: normalized and scaled in float32, rounded once
        local x = args.HALF[input.dtype] and input:float() or input
        local shape = x.shape
        shape[1], shape[2] = 1, n * c
        local rm, rv
        if running_mean then
            rm, rv = running_mean:tile(n), running_var:tile(n)
        end
        local y = I.batch_norm(x:reshape(shape), rm, rv, nil, nil, use_input_stats,
            momentum, eps, who):view(x.shape)
        if running_mean and use_input_stats then
            autograd.no_grad(function()
                running_mean:copy_(rm:view(n, c):mean(1))
                running_var:copy_(rv:view(n, c):mean(1))
            end)
        end
        local bshape = { 1, c }
        for d = 3, input:dim() do
            bshape[d] = 1
        end
        return I.channel_affine(y, weight, bias, bshape):to(input.dtype)
    end

    -- {p = 0.5, training = true}: in training, zeroes whole channels of {N, C, L} or {C, L}
    -- with probability p and scales the rest by 1/(1-p); the input itself otherwise
    function F.dropout1d(input, opts)
        return C.feature_dropout(input, opts, "dropout1d", 1,
            "{N, C, L} or {C, L} (channels of one spatial dim)")
    end

    -- {p = 0.5, training = false (PyTorch's default here), inplace =}: in training, each
    -- element is kept with probability 1 - p, the others set to SELU's negative saturation, then
    -- all scaled and shifted so that zero mean and unit variance stay (PyTorch's a and b); with
    -- p = 1 zeros, as PyTorch's
    function F.alpha_dropout(input, opts)
        return C.alpha_dropout(input, opts, "alpha_dropout", false)
    end

    -- channel_shuffle(input [N, C, *], groups): the channels read as {groups, C / groups} and
    -- transposed, as PyTorch's (whose 1.13 has no gradient for it; this one has)
    local function shuffle(who, input, groups)
        tensor_arg(input, who, "input")
        int_arg(groups, who, "groups", 1)
        if input:dim() < 3 then
            raise("tide: " .. who .. ": expected input {N, C, *} with at least 3 dims, got " ..
                shape_str(input))
        end
        local n, c = input:size(1), input:size(2)
        if c % groups ~= 0 then
            raise(string.format("tide: %s: %d channels (input %s) are not " ..
                "divisible by groups %d", who, c, shape_str(input), groups))
        end
        local shape, rest = input.shape, 1
        for d = 3, #shape do
            rest = rest * shape[d] -- not -1: an empty batch leaves -1 undetermined
        end
        return input:reshape(n, groups, idiv(c, groups), rest):transpose(2, 3):reshape(shape)
    end
    function F.channel_shuffle(input, groups)
        return shuffle("channel_shuffle", input, groups)
    end
    -- PyTorch 1.13's F.native_channel_shuffle (torch.native_channel_shuffle): the same values
    function F.native_channel_shuffle(input, groups)
        return shuffle("native_channel_shuffle", input, groups)
    end

    -- conv_tbc(input [T, B, C_in], weight [K, C_in, C_out], bias [C_out][, pad = 0]): conv1d
    -- over time with batch and channels after it (PyTorch's), as [T + 2 pad - K + 1, B, C_out]
    function F.conv_tbc(input, weight, bias, pad)
        local who = "conv_tbc"
        tensor_arg(input, who, "input")
        tensor_arg(weight, who, "weight")
        tensor_arg(bias, who, "bias")
        if type(pad) == "table" then -- or {pad =}
            pad = options(pad, who, { "pad" }).pad
        end
        pad = pad == nil and 0 or int_arg(pad, who, "pad", 0)
        if input:dim() ~= 3 or weight:dim() ~= 3 or bias:dim() ~= 1 then
            raise(string.format("tide: conv_tbc: expected input {T, B, C_in}, weight {K, C_in, " ..
                "C_out} and bias {C_out}, got %s, %s and %s", shape_str(input),
                shape_str(weight), shape_str(bias)))
        end
        return F.conv1d(input:permute(2, 3, 1), weight:permute(3, 2, 1), bias,
            { padding = pad }):permute(3, 1, 2)
    end

    -- bilinear(input1 [..., in1], input2 [..., in2], weight [out, in1, in2][, bias [out]]):
    -- x1^T W_o x2 + b_o for each out, summed over in1 first, then in2 (PyTorch's order)
    function F.bilinear(input1, input2, weight, bias)
        local who = "bilinear"
        tensor_arg(input1, who, "input1")
        tensor_arg(input2, who, "input2")
        tensor_arg(weight, who, "weight")
        optional_tensor(bias, who, "bias")
        if weight:dim() ~= 3 then
            raise("tide: bilinear: expected a 3-D weight {out, in1, in2}, got " ..
                shape_str(weight))
        end
        local out, in1, in2 = weight:size(1), weight:size(2), weight:size(3)
        local nd = input1:dim()
        local lead_ok = nd >= 1 and input2:dim() == nd
        for d = 1, nd - 1 do
            lead_ok = lead_ok and input1:size(d) == input2:size(d)
        end
        if not lead_ok or input1:size(nd) ~= in1 or input2:size(nd) ~= in2 then
            raise(string.format("tide: bilinear: expected input1 {..., %d} and input2 {..., %d} " ..
                "with the same leading dims (weight %s), got %s and %s", in1, in2,
                shape_str(weight), shape_str(input1), shape_str(input2)))
        end
        if bias and (bias:dim() ~= 1 or bias:size(1) ~= out) then
            raise(string.format("tide: bilinear: expected bias of shape {%d}, got %s", out,
                shape_str(bias)))
        end
        same_device(input1, input2, who, "input2")
        same_device(input1, weight, who, "weight")
        I.check_dtype(input1, weight, who)
        I.check_dtype(input2, weight, who)
        same_device(input1, bias, who, "bias")
        local rows = idiv(input1:numel(), math.max(in1, 1))
        local t = input1:reshape(rows, in1):matmul(weight:permute(2, 1, 3):reshape(in1, out * in2))
        local y = t:view(rows, out, in2):bmm(input2:reshape(rows, in2, 1)):view(rows, out)
        if bias then
            y = y:add(bias)
        end
        local shape = input1.shape
        shape[nd] = out
        return y:reshape(shape)
    end

    -- input [N, Cin, L] or [Cin, L], weight [Cin, Cout / groups, k], bias [Cout]; {stride =,
    -- padding =, output_padding =, dilation =, groups =} (integers): conv_transpose2d on a
    -- height of 1
    function F.conv_transpose1d(input, weight, bias, opts)
        if autocast.on then
            input, weight, bias = autocast.lower(input, weight, bias)
        end
        local who = "conv_transpose1d"
        local o = F._conv_transpose_args(who, input, weight, bias, opts)
        local s = int_arg(o.stride or 1, who, "stride", 1)
        local p = int_arg(o.padding or 0, who, "padding", 0)
        local op = int_arg(o.output_padding or 0, who, "output_padding", 0)
        local d = int_arg(o.dilation or 1, who, "dilation", 1)
        local groups = int_arg(o.groups or 1, who, "groups", 1)
        local nd = input:dim()
        if (nd ~= 2 and nd ~= 3) or weight:dim() ~= 3 or input:size(nd - 1) ~= weight:size(1) then
            raise(string.format("tide: %s: expected input {N, Cin, L} (or unbatched {Cin, L}) and " ..
                "weight {Cin, Cout / groups, k} with the same Cin, got %s and %s", who,
                shape_str(input), shape_str(weight)))
        end
        F._conv_transpose_channels(who, weight, bias, groups)
        if op >= s and op >= d then
            raise(string.format("tide: %s: output_padding %d must be smaller than the stride " ..
                "%d or the dilation %d", who, op, s, d))
        end
        local l = input:size(nd)
        if (l - 1) * s - 2 * p + d * (weight:size(3) - 1) + 1 + op < 1 then
            raise(string.format("tide: %s: padding %d leaves no output for input length %d",
                who, p, l))
        end
        same_device(input, weight, who, "weight")
        I.check_dtype(input, weight, who)
        same_device(input, bias, who, "bias")
        local x = nd == 2 and input:unsqueeze(1) or input
        local y = F.conv_transpose2d(x:unsqueeze(3), weight:unsqueeze(3), bias, { stride = { 1, s },
            padding = { 0, p }, output_padding = { 0, op }, dilation = { 1, d },
            groups = groups }):squeeze(3)
        return nd == 2 and y:squeeze(1) or y
    end

    -- local_response_norm(input, size[, {alpha = 1e-4, beta = 0.75, k = 1}]): input [N, C, *]
    -- divided by (k + alpha * the mean of x^2 over a window of `size` channels)^beta, the
    -- window zero-padded by size // 2 channels before and (size - 1) // 2 after, as PyTorch's
    function F.local_response_norm(input, size, opts)
        local who = "local_response_norm"
        tensor_arg(input, who, "input")
        local n = int_arg(size, who, "size", 1)
        local o = options(opts, who, { "alpha", "beta", "k" })
        local alpha = number_opt(o.alpha, 1e-4, who, "alpha")
        local beta = number_opt(o.beta, 0.75, who, "beta")
        local k = number_opt(o.k, 1, who, "k")
        if input:dim() < 3 then
            raise("tide: local_response_norm: expected input {N, C, *} with 3 or more dims, " ..
                "got " .. shape_str(input))
        end
        local sq = input:mul(input)
        local function zeros(c)
            local shape = input.shape
            shape[2] = c
            return core.zeros(shape, { dtype = input.dtype, device = input.device })
        end
        local before, after = idiv(n, 2), idiv(n - 1, 2)
        local padded = core.cat({ zeros(before), sq, zeros(after) }, 2)
        local mean = padded:unfold(2, n, 1):sum(-1):div(n)
        return input:div(mean:mul(alpha):add(k):pow(beta))
    end

    -- embedding_bag(input, weight[, offsets][, {mode = "mean", per_sample_weights =,
    -- padding_idx =, include_last_offset = false}]): the rows of weight that the 1-based ids
    -- of input look up, reduced per bag ("sum", "mean" or "max"; an empty bag gives 0). Bags:
    -- the rows of a 2-D input, or the runs of a 1-D input that start at the 1-based offsets
    -- (the first is 1; with include_last_offset the last is #input + 1, the end). Lookups of
    -- padding_idx are left out (of the mean's count too); per_sample_weights (mode "sum")
    -- scales each lookup.
    function F.embedding_bag(input, weight, offsets, opts)
        local who = "embedding_bag"
        tensor_arg(input, who, "input")
        tensor_arg(weight, who, "weight")
        if opts == nil and type(offsets) == "table" and not is_tensor(offsets) then
            opts, offsets = offsets, nil
        end
        optional_tensor(offsets, who, "offsets")
        local o = options(opts, who, { "mode", "per_sample_weights", "padding_idx",
            "include_last_offset", "sparse", "norm_type", "scale_grad_by_freq", "max_norm" })
        I.check_sparse(o.sparse, who)
        I.check_false_only(o.scale_grad_by_freq, "scale_grad_by_freq", who)
        local mode = o.mode or "mean"
        if mode ~= "sum" and mode ~= "mean" and mode ~= "max" then
            raise(string.format('tide: embedding_bag: mode must be "sum", "mean" or "max", ' ..
                "got %s", tostring(mode)))
        end
        local psw = optional_tensor(o.per_sample_weights, who, "per_sample_weights")
        if psw and mode ~= "sum" then
            raise(string.format('tide: embedding_bag: per_sample_weights needs mode "sum", ' ..
                'got mode "%s"', mode))
        end
        if weight:dim() ~= 2 then
            raise("tide: embedding_bag: expected a 2-D weight {num_embeddings, dim}, got " ..
                shape_str(weight))
        end
        if input.dtype ~= "int64" and input.dtype ~= "int32" then
            raise("tide: embedding_bag: expected int64 or int32 ids (1-based), got " ..
                input.dtype)
        end
        same_device(input, weight, who, "weight")
        if offsets ~= nil then
            I.check_arg_device(input, offsets, who, "offsets")
        end
        if o.max_norm ~= nil then -- PyTorch's: the looked-up rows renormed in weight, first
            local max_norm = C.number_opt(o.max_norm, nil, who, "max_norm")
            local p = C.number_opt(o.norm_type, 2, who, "norm_type")
            if max_norm <= 0 or p <= 0 then
                raise(string.format("tide: embedding_bag: expected max_norm > 0 and norm_type " ..
                    "> 0, got %s and %s", tostring(max_norm), tostring(p)))
            end
            I.embedding_ids(input, weight, who)
            I.embedding_renorm_(weight, input, max_norm, p)
        else
            I.check_number(o.norm_type, 2, "norm_type", who)
        end
        if psw ~= nil then
            I.check_arg_device(input, psw, who, "per_sample_weights")
        end
        local last = bool_opt(o.include_last_offset, false, who, "include_last_offset")
        local pad = I.padding_idx(o.padding_idx, weight:size(1), who)
        local ids, bag, bags, L, lens, starts
        local dev = weight.device
        if input:dim() == 2 then
            if offsets then
                raise("tide: embedding_bag: a 2-D input holds one bag a row: pass no offsets " ..
                    "(got " .. shape_str(offsets) .. ")")
            end
            bags, L = input:size(1), input:size(2)
            ids = input:reshape(-1)
            bag = core.arange(1, bags + 1, { dtype = "int64", device = dev }):view(bags, 1)
                :expand(bags, input:size(2)):reshape(-1)
        elseif input:dim() == 1 then
            if not offsets or offsets:dim() ~= 1 then
                raise("tide: embedding_bag: a 1-D input needs 1-D offsets, the 1-based start " ..
                    "of each bag (got " .. (offsets and shape_str(offsets) or "none") .. ")")
            end
            local n = input:numel()
            starts = offsets:to("cpu"):totable() -- (read back: the bags' layout)
            local ok = #starts >= (last and 2 or 1) and starts[1] == 1
            for i = 2, #starts do
                ok = ok and starts[i] >= starts[i - 1]
            end
            ok = ok and starts[#starts] <= n + 1 and (not last or starts[#starts] == n + 1)
            if not ok then
                raise(string.format("tide: embedding_bag: offsets must start at 1 and not " ..
                    "decrease up to %d (#input + 1%s), got %s", n + 1,
                    last and ", which include_last_offset ends with" or "",
                    table.concat(starts, ", ")))
            end
            bags = last and #starts - 1 or #starts
            local at = offsets:to("int64")
            if last then
                at = at:narrow(1, 1, bags)
            end
            -- each lookup's bag: how many starts lie at or before it
            local mark = core.zeros({ n + 1 }, { dtype = "int64", device = dev })
                :index_add_(1, at, core.ones({ bags }, { dtype = "int64", device = dev }))
            bag = mark:narrow(1, 1, n):cumsum(1)
            ids = input
            if mode == "max" then -- bag_max's lengths
                lens, L = {}, 0
                for k = 1, bags do
                    lens[k] = (starts[k + 1] or n + 1) - starts[k]
                    L = math.max(L, lens[k])
                end
            end
        else
            raise("tide: embedding_bag: expected a 1-D or 2-D input of ids, got " ..
                shape_str(input))
        end
        if psw and psw:numel() ~= ids:numel() then
            raise(string.format("tide: embedding_bag: per_sample_weights %s must have one " ..
                "weight per lookup (input %s)", shape_str(psw), shape_str(input)))
        end
        local width = weight:size(2)
        ids = ids:to("int64")
        local rows = args.as_op(who, "index_select", weight.index_select, weight, 1, ids)
        local keep = pad and ids:ne(pad):to(weight.dtype):view(-1, 1)
        local out_shape = { bags, width }
        local zeros = core.zeros(out_shape, { dtype = weight.dtype, device = dev })
        if mode == "max" then
            if L == 0 or bags == 0 then
                return zeros
            end
            return bag_max(rows, keep and keep:view(-1):gt(0), bags, L, lens, starts, bag)
        end
        if psw then
            rows = rows:mul(psw:reshape(-1, 1))
        end
        if keep then
            rows = rows:mul(keep)
        end
        local sum = zeros:index_add(1, bag, rows)
        if mode == "sum" then
            return sum
        end
        local ones = keep and keep:view(-1) or core.ones({ ids:numel() }, { dtype = weight.dtype,
            device = dev })
        local count = core.zeros({ bags }, { dtype = weight.dtype, device = dev })
            :index_add_(1, bag, ones):clamp(1, nil)
        return sum:div(count:view(bags, 1))
    end
end
