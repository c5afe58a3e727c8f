-- tide.func: PyTorch's function transforms (torch.func, functorch): grad, grad_and_value, vjp,
-- jvp, jacrev, jacfwd, hessian, vmap, functional_call and stack_module_state. Loaded on first
-- use of tide.func. Differences from PyTorch: argnums and dims are 1-based (argnums = 1 is the
-- first argument); there is no forward mode (jvp and jacfwd run reverse mode twice, the
-- double-backward trick) and no batching rules (vmap calls f once per slice and stacks); a
-- function's several results are Lua's multiple values where PyTorch returns a tuple.
local M = {}

local grad = require("tide.func.grad")
local jacobian = require("tide.func.jacobian")

M.grad = grad.grad
M.grad_and_value = grad.grad_and_value
M.vjp = require("tide.func.vjp").vjp
M.jvp = require("tide.func.jvp").jvp
M.jacrev = jacobian.jacrev
M.jacfwd = jacobian.jacfwd
M.hessian = jacobian.hessian
M.vmap = require("tide.func.vmap").vmap
M.functional_call = require("tide.func.functional_call").functional_call
M.stack_module_state = require("tide.func.stack_module_state").stack_module_state

return M
