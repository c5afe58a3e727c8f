-- tide.amp: mixed precision, as torch.amp / torch.cuda.amp: autocast (ops in float16 or
-- bfloat16 where that is safe, float32 where it is not; also tide.autocast) and GradScaler
-- (loss scaling so that float16 gradients do not underflow). Loaded on first use.
local amp = {}

local function autocast_functions()
    local fns = require("tide.amp.autocast").functions
    for k, v in pairs(fns) do
        rawset(amp, k, v)
    end
end

local lazy = {
    GradScaler = "tide.amp.GradScaler",
    autocast = autocast_functions,
    is_autocast_enabled = autocast_functions,
    get_autocast_dtype = autocast_functions,
    is_autocast_cpu_enabled = autocast_functions,
    get_autocast_cpu_dtype = autocast_functions,
    get_autocast_gpu_dtype = autocast_functions,
    is_autocast_cache_enabled = autocast_functions,
    clear_autocast_cache = autocast_functions,
}

return require("tide._lazy")(amp, lazy)
