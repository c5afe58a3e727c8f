-- tide.profiler.flops: the floating-point operations of an op, for profile{with_flops = true},
-- by PyTorch 1.13's formulas (its profiler's computeFlops): a product of (m, k) by (k, n) is
-- 2 m k n (mm, bmm, addmm, baddbmm, and tide's matmul and linear, which PyTorch counts on the
-- mm or addmm they run), a conv2d 2 N OH OW KH KW Cin Cout / groups, mul and add the elements
-- of their first tensor. Each rule reads the op's arguments (a packed table) and its result;
-- nil where the values are not tensors of the expected ranks (the op raised, or took another
-- form). An op run inside another op with a rule is not counted again (event_list).
local core = require("tide.core")

local is_tensor = core.is_tensor

local RULES = {}

-- a product's 2 k per element of its result y, k the last dim of its left operand a
local function product(a, y)
    if is_tensor(a) and is_tensor(y) and a:dim() >= 1 then
        return 2 * y:numel() * a:size(a:dim())
    end
end

function RULES.mm(args, y)
    return product(args[1], y)
end
RULES.bmm, RULES.matmul = RULES.mm, RULES.mm

function RULES.addmm(args, y) -- (input, mat1, mat2)
    return product(args[2], y)
end
RULES.baddbmm = RULES.addmm

function RULES.linear(args, y) -- (x, weight[, bias]): weight (out, in)
    return product(args[2], y)
end

-- 2 N OH OW Cout (Cin / groups) KH KW: the result's elements times the weight's per channel
function RULES.conv2d(args, y)
    local w = args[2]
    if is_tensor(w) and is_tensor(y) and w:dim() == 4 then
        return 2 * y:numel() * math.floor(w:numel() / w:size(1))
    end
end

function RULES.mul(args)
    for k = 1, args.n do
        if is_tensor(args[k]) then
            return args[k]:numel()
        end
    end
end
RULES.add = RULES.mul

return RULES
