-- tide.func.stack_module_state: PyTorch 2's torch.func.stack_module_state. For a list of
-- models of one class, in one mode (train or eval), returns (params, buffers): tables name ->
-- the models' tensors of that name stacked along a new dim 1, ready for tide.func.vmap over
-- tide.func.functional_call (an ensemble run as one call). Stacked parameters are new leaves
-- that require grad (when the models' do), detached from the models, as PyTorch's.
local core = require("tide.core")
local Module = require("tide.nn.Module")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local pytree = require("tide.func.pytree")

local M = {}

local who = "func.stack_module_state"

-- name -> tensor of m's named parameters or buffers, and the names in order
local function named(m, method)
    local byname, names = {}, {}
    for _, pair in ipairs(m[method](m)) do
        byname[pair[1]] = pair[2]
        names[#names + 1] = pair[1]
    end
    return byname, names
end

local function stacked(models, method, kind)
    local all = {}
    for i, m in ipairs(models) do
        all[i] = named(m, method)
    end
    local _, names = named(models[1], method)
    local out = {}
    for _, name in ipairs(names) do
        local ts, grads = {}, 0
        for i = 1, #models do
            local t = all[i][name]
            if t == nil then
                raise(("tide: %s: model %d has no %s '%s' (model 1 has)"):format(who, i, kind,
                    name))
            end
            ts[i] = t:detach()
            grads = grads + (t.requires_grad and 1 or 0)
        end
        if grads ~= 0 and grads ~= #models then
            raise(("tide: %s: '%s' requires grad in some models and not in others; give it " ..
                "the same requires_grad in every model"):format(who, name))
        end
        local s = core.stack(ts, 1)
        out[name] = grads > 0 and s:requires_grad_(true) or s
    end
    for i = 2, #models do
        local _, extra = named(models[i], method)
        for _, name in ipairs(extra) do
            if all[1][name] == nil then
                raise(("tide: %s: model %d has a %s '%s' that model 1 has not"):format(who, i,
                    kind, name))
            end
        end
    end
    return out
end

function M.stack_module_state(models, ...)
    args.no_extra(who, 1, ...)
    if type(models) ~= "table" or Module.is_module(models) or core.is_tensor(models) then
        raise(("tide: %s: expected a list of models, got %s"):format(who,
            Module.is_module(models) and "a Module (put it in a list: {model})" or
            pytree.what(models)))
    end
    if #models == 0 then
        raise(("tide: %s: expected at least one model, got an empty list"):format(who))
    end
    for i, m in ipairs(models) do
        if not Module.is_module(m) then
            raise(("tide: %s: models[%d] is %s, expected a Module"):format(who, i,
                pytree.what(m)))
        end
        if getmetatable(m) ~= getmetatable(models[1]) then
            raise(("tide: %s: models[%d] is a %s, models[1] a %s; stack models of one class")
                :format(who, i, m.__name, models[1].__name))
        end
        if m.training ~= models[1].training then
            raise(("tide: %s: models[%d] is in %s mode, models[1] in %s mode; put them all in " ..
                "one (m:train() or m:eval())"):format(who, i, m.training and "train" or "eval",
                models[1].training and "train" or "eval"))
        end
    end
    return stacked(models, "named_parameters", "parameter"),
        stacked(models, "named_buffers", "buffer")
end

return M
