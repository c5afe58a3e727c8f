-- tide.nn.modules: PyTorch's torch.nn.modules path to what ported code reaches through it,
-- nn.modules.module's global hooks (tide.nn.module_hooks): register_module_forward_pre_hook,
-- register_module_forward_hook, register_module_full_backward_hook.
local hooks = require("tide.nn.module_hooks")

return {
    module = {
        register_module_forward_pre_hook = hooks.register_module_forward_pre_hook,
        register_module_forward_hook = hooks.register_module_forward_hook,
        register_module_full_backward_hook = hooks.register_module_full_backward_hook,
    },
}
