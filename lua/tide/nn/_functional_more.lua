-- More of tide.nn.functional, as PyTorch 1.13 computes them: pdist (the distances between the
-- rows of one matrix), triplet_margin_with_distance_loss (any distance), the deprecated
-- upsample, upsample_nearest and upsample_bilinear (F.interpolate under PyTorch's old names)
-- and feature_alpha_dropout (alpha dropout of whole channels). Loaded on first use from the
-- lazy map at the end of functional.lua; its argument checks are tide.nn._args.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local I = require("tide.nn._internal")
local C = require("tide.nn._args")

local raise = autograd.raise
local is_tensor = autograd.is_tensor

return function(F)
    local tensor_arg, options, number_opt, bool_opt = C.tensor_arg, C.options, C.number_opt,
        C.bool_opt
    local shape_str = C.shape_str

    -- pdist(x[, p = 2]): the p-norm distances between the rows of x {N, M}, for each pair
    -- i < j in row-major order ({N (N - 1) / 2}); p >= 0 (0 counts the differing elements,
    -- math.huge takes the largest). Zero differences are kept out of the powers, so a repeated
    -- row has gradient 0, as PyTorch's
    function F.pdist(x, p, opts)
        local who = "pdist"
        require("tide.op_args").options(who, opts, { "p" }, "{p = 1}")
        tensor_arg(x, who, "input")
        p = number_opt(p, 2, who, "p")
        if p < 0 or p ~= p then
            raise(("tide: pdist: p must be a non-negative number, got %s"):format(tostring(p)))
        end
        if x:dim() ~= 2 then
            raise("tide: pdist: expected a 2-D input {N, M}, got " .. shape_str(x))
        end
        if not C.FLOAT_DTYPES[x.dtype] then
            raise(("tide: pdist: needs a floating-point input, got %s; convert with " ..
                ":to(\"float32\")"):format(x.dtype))
        end
        local n = x:size(1)
        if n < 2 then
            return x:sum(2):narrow(1, 1, 0)
        end
        -- the pairs' rows and columns (1-based, row-major), then their differences {P, M}
        args.check_budget(who, n * (n - 1) / 2 * math.max(x:size(2), 1), 8, "the differences " ..
            "of its row pairs", "pass fewer rows")
        local ij = require("tide").triu_indices(n, n, 1, { device = x.device })
        local a = (x:index_select(1, ij[1]) - x:index_select(1, ij[2])):abs()
        if p == 0 then
            return a:ne(0):to(x.dtype):add(a:mul(0)):sum(2) -- (the 0 keeps the graph: gradient 0)
        end
        if p == math.huge then -- each of tied largest differences gets the whole gradient, as
            -- PyTorch's (amax's would share it): the value m, the gradient through the mask
            local m = a:detach():amax(2, true)
            return (a - a:detach()):mul(a:detach():eq(m)):sum(2):add(m:squeeze(2))
        end
        local nz = a:gt(0)
        local s = core.where(nz, core.where(nz, a, 1):pow(p), 0):sum(2)
        local pos = s:gt(0)
        return core.where(pos, core.where(pos, s, 1):pow(1 / p), 0)
    end

    -- triplet_margin_with_distance_loss(anchor, positive, negative[, {distance_function =
    -- F.pairwise_distance, margin = 1, swap = false, reduction = "mean"}]): max(0, margin +
    -- d(a, p) - d(a, n)), d(a, n) replaced by min(d(a, n), d(p, n)) with swap, as PyTorch's
    function F.triplet_margin_with_distance_loss(anchor, positive, negative, opts)
        local who = "triplet_margin_with_distance_loss"
        tensor_arg(anchor, who, "anchor")
        tensor_arg(positive, who, "positive")
        tensor_arg(negative, who, "negative")
        local o = options(opts, who, { "distance_function", "margin", "swap", "reduction" })
        local reduction = I.check_reduction(o.reduction or "mean", who)
        local margin = number_opt(o.margin, 1, who, "margin")
        if not (margin > 0) then
            raise(("tide: %s: margin must be greater than 0, got %s"):format(who,
                tostring(margin)))
        end
        local swap = bool_opt(o.swap, false, who, "swap")
        local dist = o.distance_function
        local mt = type(dist) == "table" and getmetatable(dist)
        if dist ~= nil and type(dist) ~= "function" and not (mt and mt.__call) then
            raise(("tide: %s: distance_function must be a function or a module, got %s")
                :format(who, type(dist)))
        end
        C.same_device(anchor, positive, who, "positive")
        C.same_device(anchor, negative, who, "negative")
        if anchor:dim() ~= positive:dim() or anchor:dim() ~= negative:dim() then
            raise(("tide: %s: expected anchor, positive and negative of one rank, got %s, %s " ..
                "and %s"):format(who, shape_str(anchor), shape_str(positive),
                shape_str(negative)))
        end
        dist = dist or F.pairwise_distance
        local function d(a, b)
            local r = dist(a, b)
            if not is_tensor(r) then
                raise(("tide: %s: distance_function must return a tensor, got %s"):format(who,
                    type(r)))
            end
            return r
        end
        local d_ap, d_an = d(anchor, positive), d(anchor, negative)
        if swap then
            d_an = core.minimum(d_an, d(positive, negative))
        end
        return I.reduce((d_ap - d_an):add(margin):clamp(0, nil), reduction, who)
    end

    local check_resize = require("tide.nn._resize_check")

    -- upsample(x, opts): F.interpolate (PyTorch's deprecated name)
    function F.upsample(input, opts)
        if type(opts) == "table" and not is_tensor(opts) then
            check_resize("upsample", input, opts.size, opts.scale_factor)
        end
        return args.as_op("upsample", "interpolate", F.interpolate, input, opts)
    end

    -- (x, size[, scale_factor]) or (x, {size =, scale_factor =}): the options of interpolate
    local function size_or_options(who, size, scale_factor)
        if type(size) == "table" and not is_tensor(size) and size[1] == nil and
            next(size) ~= nil then
            if scale_factor ~= nil then
                raise(("tide: %s: give size and scale_factor in the options table, or both " ..
                    "positionally"):format(who))
            end
            local o = options(size, who, { "size", "scale_factor" })
            return { size = o.size, scale_factor = o.scale_factor }
        end
        return { size = size, scale_factor = scale_factor }
    end

    -- upsample_nearest(x, size[, scale_factor]) or (x, {size =, scale_factor =}): nearest
    -- interpolation
    function F.upsample_nearest(input, size, scale_factor)
        local who = "upsample_nearest"
        local o = size_or_options(who, size, scale_factor)
        check_resize(who, input, o.size, o.scale_factor)
        o.mode = "nearest"
        return args.as_op(who, "interpolate", F.interpolate, input, o)
    end

    -- upsample_bilinear(x, size[, scale_factor]) or (x, {size =, scale_factor =}): bilinear
    -- interpolation of {N, C, H, W} with align_corners = true, as PyTorch's
    function F.upsample_bilinear(input, size, scale_factor)
        local who = "upsample_bilinear"
        local o = size_or_options(who, size, scale_factor)
        check_resize(who, input, o.size, o.scale_factor)
        o.mode, o.align_corners = "bilinear", true
        return args.as_op(who, "interpolate", F.interpolate, input, o)
    end

    -- feature_alpha_dropout(x[, {p = 0.5, training = false, inplace =}]) (or a number p): in
    -- training, alpha dropout (alpha_dropout's values) of whole channels of x {N, C, *}: one
    -- draw per (sample, channel), as PyTorch's; the input itself otherwise
    function F.feature_alpha_dropout(input, opts)
        return C.alpha_dropout(input, opts, "feature_alpha_dropout", true)
    end
end
