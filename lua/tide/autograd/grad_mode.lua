-- tide.autograd.grad_mode: PyTorch's torch.autograd.grad_mode namespace, for ported scripts:
-- no_grad(fn, ...), enable_grad(fn, ...) and inference_mode([mode, ]fn, ...) (fn(...) with the
-- mode set, restored after, also on error) and set_grad_enabled(b) (returns the previous mode);
-- the same functions as tide.no_grad, tide.enable_grad, tide.inference_mode and
-- tide.set_grad_enabled.
local autograd = require("tide.autograd")

return {
    no_grad = autograd.no_grad,
    enable_grad = autograd.enable_grad,
    set_grad_enabled = autograd.set_grad_enabled,
    inference_mode = require("tide.global_modes").functions.inference_mode,
}
