-- tide.nn._lazy_norm: what LazyInstanceNorm1d/2d/3d share (tide.nn._lazy_module): PyTorch's
-- lazy defaults affine = true and track_running_stats = true, and the channels read from the
-- first input, batched or not
local compat = require("tide._compat")
local autograd = require("tide.autograd")
local raise = autograd.raise
local I = require("tide.nn._internal")

local M = {}

-- the arguments after num_features, the two defaults filled in (a copy: the caller's options
-- table stays as given)
local function lazy_defaults(args)
    local a = args[1]
    if type(a) == "table" and not autograd.is_tensor(a) then
        local o = {}
        for k, v in pairs(a) do
            o[k] = v
        end
        if o.affine == nil then
            o.affine = true
        end
        if o.track_running_stats == nil then
            o.track_running_stats = true
        end
        return compat.pack(o, compat.unpack(args, 2, args.n))
    end
    local out = compat.pack(compat.unpack(args, 1, args.n))
    for i = 3, 4 do
        if out[i] == nil then
            out[i] = true
        end
    end
    out.n = math.max(out.n, 4)
    return out
end

function M.instance_norm(name, Base)
    return require("tide.nn._lazy_module")(name, Base, function(x, who)
        local nd = x:dim()
        if nd ~= Base.dims and nd ~= Base.dims - 1 then
            raise("tide: " .. who .. ": expected " .. Base.expects .. " input, got " ..
                I.shape_str(x.shape))
        end
        return x:size(nd - Base.dims + 2)
    end, lazy_defaults)
end

return M
