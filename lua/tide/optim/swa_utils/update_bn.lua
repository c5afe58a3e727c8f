-- update_bn(loader, model[, device]): PyTorch 1.13's torch.optim.swa_utils.update_bn. Every
-- BatchNorm of model has its running statistics reset (mean 0, variance 1, no batches
-- tracked) and its momentum set to nil, a cumulative average, for one pass over loader in
-- training mode; the momenta and model's mode (model:train(was_training), as PyTorch) are
-- restored after. A model without BatchNorm is left as it is and loader is not read.
-- loader: a tide.data.DataLoader (anything with iter()), a Lua iterator function, or a list
-- of batches; a batch is a tensor or a table whose first element is the input (the first
-- value an iterator gives counts likewise). device: the inputs are moved there first.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local Module = require("tide.nn.Module")
local BatchNorm = require("tide.nn._BatchNorm")
local raise = autograd.raise
local is_tensor = autograd.is_tensor

local WHO = "update_bn"

local function is_batchnorm(m)
    local cls = getmetatable(m)
    while type(cls) == "table" do
        if cls == BatchNorm then
            return true
        end
        local mt = getmetatable(cls)
        cls = mt and mt.__index
    end
    return false
end

-- fn(batch) for each batch of loader
local function each_batch(loader, fn)
    if type(loader) == "function" then
        for batch in loader do
            fn(batch)
        end
    elseif type(loader) == "table" and type(loader.iter) == "function" then
        for batch in loader:iter() do
            fn(batch)
        end
    elseif type(loader) == "table" and not is_tensor(loader) then
        for _, batch in ipairs(loader) do
            fn(batch)
        end
    else
        raise("tide: " .. WHO .. ": expected a loader (a tide.data.DataLoader, an iterator " ..
            "function or a list of batches), got " .. (is_tensor(loader) and "a tensor" or
            type(loader)) .. "; wrap a single batch as {x}")
    end
end

return function(loader, model, ...)
    local device = require("tide.pytorch_args").merge(WHO, { "device" }, ...)
    device = args.options(WHO, device, { "device" }).device
    if not Module.is_module(model) then
        raise("tide: " .. WHO .. ": expected a model (an nn.Module) as the second argument, " ..
            "got " .. type(model))
    end
    if device ~= nil then
        device = core.device(device)
    end
    local momenta, bns = {}, {}
    for _, m in ipairs(model:modules()) do
        -- a BatchNorm built with track_running_stats = false has no statistics to redo: it is
        -- skipped (PyTorch 1.13's raises a TypeError from zeros_like(None) there)
        if is_batchnorm(m) and rawget(m, "running_mean") ~= nil then
            bns[#bns + 1] = m
        end
    end
    if #bns == 0 then
        return
    end
    local was_training = model.training
    autograd.no_grad(function()
        for i, m in ipairs(bns) do
            local tide = require("tide")
            m.running_mean = tide.zeros_like(m.running_mean)
            m.running_var = tide.ones_like(m.running_var)
            momenta[i] = m.momentum
        end
        model:train()
        for _, m in ipairs(bns) do
            m.momentum = nil
            m.num_batches_tracked:mul_(0)
        end
        -- the momenta come back even when a batch raises
        local ok, err = pcall(each_batch, loader, function(batch)
            local input = batch
            if type(batch) == "table" and not is_tensor(batch) then
                input = batch[1]
            end
            if not is_tensor(input) then
                raise(string.format("tide: %s: expected each batch to be a tensor or a " ..
                    "table whose first element is the input tensor, got %s", WHO,
                    type(input)))
            end
            if device ~= nil then
                input = input:to(device)
            end
            model(input)
        end)
        for i, m in ipairs(bns) do
            m.momentum = momenta[i]
        end
        model:train(was_training)
        if not ok then
            error(err, 0)
        end
    end)
end
