-- AveragedModel(model[, {device =, avg_fn =, use_buffers = false}]): PyTorch 1.13's
-- torch.optim.swa_utils.AveragedModel, an nn.Module holding `module`, a deep copy of model
-- (moved to device when given), and the buffer n_averaged (a 0-d int64 tensor, on device or
-- the CPU, as PyTorch's). update_parameters(model) copies model's parameters on its first
-- call and then keeps their running mean, a + (m - a) / (n + 1), or avg_fn(a, m, n) (a and m
-- tensors, n the n_averaged tensor on a's device, as PyTorch passes it) when given; with
-- use_buffers the buffers are averaged too. Calling it runs the inner module.
--
--     local swa = tide.optim.swa_utils.AveragedModel(model)
--     swa:update_parameters(model)      -- after each epoch of the SWA phase
--
-- state_dict keys are PyTorch's: n_averaged, then module.<the model's keys>.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local Module = require("tide.nn.Module")
local deepcopy = require("tide.deepcopy").functions.deepcopy
local Complex = require("tide.complex.tensor")
local raise = autograd.raise

local AveragedModel = Module:extend("AveragedModel")

local WHO = "AveragedModel"

local function default_avg(averaged, model, num_averaged)
    return averaged + (model - averaged) / (num_averaged + 1)
end

-- AveragedModel(model[, device[, avg_fn[, use_buffers]]]), any of them by name in a trailing
-- table (PyTorch 1.13's keywords)
function AveragedModel:init(model, ...)
    local opts = require("tide.pytorch_args").merge(WHO, { "device", "avg_fn", "use_buffers" },
        ...)
    if not Module.is_module(model) then
        raise("tide: " .. WHO .. ": expected a model (an nn.Module), got " .. type(model))
    end
    opts = args.options(WHO, opts, { "device", "avg_fn", "use_buffers" },
        "{use_buffers = true}")
    if opts.avg_fn ~= nil and type(opts.avg_fn) ~= "function" then
        raise("tide: " .. WHO .. ": avg_fn must be a function(averaged, model_param, " ..
            "num_averaged) returning the new average, got " .. type(opts.avg_fn))
    end
    if opts.use_buffers ~= nil and type(opts.use_buffers) ~= "boolean" then
        raise("tide: " .. WHO .. ": use_buffers must be true or false, got " ..
            type(opts.use_buffers))
    end
    -- a device only (Module:to would also take a dtype name)
    local device = opts.device ~= nil and core.device(opts.device) or nil
    local copy = deepcopy(model)
    if device ~= nil then
        copy:to(device)
    end
    self.module = copy
    self:register_buffer("n_averaged", core.tensor(0, { dtype = "int64",
        device = device or "cpu" }))
    self.avg_fn = opts.avg_fn or default_avg
    self.use_buffers = opts.use_buffers == true
end

function AveragedModel:forward(...)
    return self.module(...)
end

local function tensors(m, use_buffers)
    local list = m:parameters()
    if use_buffers then
        for _, b in ipairs(m:buffers()) do
            list[#list + 1] = b
        end
    end
    return list
end

local function shape_str(t)
    return args.shape_str(t.shape)
end

function AveragedModel:update_parameters(model, ...)
    local who = WHO .. ":update_parameters"
    args.no_extra(who, 1, ...)
    if not Module.is_module(model) then
        raise("tide: " .. who .. ": expected the model being trained (an nn.Module), got " ..
            type(model))
    end
    local mine = tensors(self.module, self.use_buffers)
    local theirs = tensors(model, self.use_buffers)
    local what = self.use_buffers and "parameters and buffers" or "parameters"
    -- checked first, so a mismatched model changes nothing (PyTorch's zip stops silently)
    if #mine ~= #theirs then
        raise(string.format("tide: %s: the averaged model has %d %s, the model %d; pass the " ..
            "model the AveragedModel was made from", who, #mine, what, #theirs))
    end
    for i = 1, #mine do
        if not args.same_shape(mine[i].shape, theirs[i].shape) then
            raise(string.format("tide: %s: %s %d is %s in the averaged model, %s in the " ..
                "model; pass the model the AveragedModel was made from", who, what, i,
                shape_str(mine[i]), shape_str(theirs[i])))
        end
    end
    local n = self.n_averaged:item()
    autograd.no_grad(function()
        for i = 1, #mine do
            local p = mine[i]:detach()
            local q = theirs[i]:detach()
            if q.device ~= p.device then
                q = q:to(p.device)
            end
            if n == 0 then
                p:copy_(q)
            else
                local counted = self.n_averaged
                if counted.device ~= p.device then
                    counted = counted:to(p.device)
                end
                local v = self.avg_fn(p, q, counted)
                if not autograd.is_tensor(v) and not Complex.is(v) then -- (a complex one's)
                    raise(string.format("tide: %s: avg_fn returned %s for %s %d; it must " ..
                        "return a tensor (the new average)", who, type(v), what, i))
                end
                p:copy_(v)
            end
        end
        self.n_averaged:add_(1)
    end)
end

return AveragedModel
