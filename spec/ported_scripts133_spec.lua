-- ported_scripts133_spec.lua — state-spaces/mamba's mamba_ssm/ops/selective_scan_interface.py:
-- selective_scan_ref (real A with fixed B / C and variable B / C of 3 and 4 dims; complex A with
-- variable B / C given as real [..., 2 * L] and viewed with torch.view_as_complex; the D skip,
-- the silu(z) gate, delta_bias, delta_softplus, return_last_state) and mamba_inner_ref (with
-- causal-conv1d's causal_conv1d_ref standing in for causal_conv1d_fn, and selective_scan_ref for
-- the CUDA selective_scan_fn), ported line for line at tiny sizes (batch 2, dim 3, dstate 4,
-- seqlen 5) on inputs given by formulas. The Python line stands above each Lua line that differs
-- from it. Values, last states and gradients are PyTorch 1.13's (float32) on the same inputs,
-- compared by three sums over each flattened tensor (plain, cos- and sin-weighted).
local tide = require("tide")
local F = tide.nn.functional
local einops = tide.einops

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

local unpack = table.unpack or unpack -- luacheck: ignore
local f32 = { dtype = "float32" }

---------------------------------------------------------------------------------------------
-- mamba_ssm/ops/selective_scan_interface.py
---------------------------------------------------------------------------------------------
-- def selective_scan_ref(u, delta, A, B, C, D=None, z=None, delta_bias=None,
--                        delta_softplus=False, return_last_state=False):
local function selective_scan_ref(u, delta, A, B, C, D, z, delta_bias, delta_softplus,
                                  return_last_state)
    -- dtype_in = u.dtype
    local dtype_in = u.dtype
    -- u = u.float()
    u = u:float()
    delta = delta:float()
    if delta_bias ~= nil then
        -- delta = delta + delta_bias[..., None].float()
        delta = delta + delta_bias[{ "...", tide.newaxis }]:float()
    end
    if delta_softplus then
        delta = F.softplus(delta)
    end
    -- batch, dim, dstate = u.shape[0], A.shape[0], A.shape[1]
    local batch, dim, dstate = u.shape[1], A.shape[1], A.shape[2]
    -- is_variable_B = B.dim() >= 3
    local is_variable_B = B:dim() >= 3
    local is_variable_C = C:dim() >= 3
    if tide.is_complex(A) then
        if is_variable_B then
            -- B = torch.view_as_complex(rearrange(B.float(), "... (L two) -> ... L two", two=2))
            B = tide.view_as_complex(einops.rearrange(B:float(), "... (L two) -> ... L two",
                { two = 2 }))
        end
        if is_variable_C then
            C = tide.view_as_complex(einops.rearrange(C:float(), "... (L two) -> ... L two",
                { two = 2 }))
        end
    else
        B = B:float()
        C = C:float()
    end
    -- x = A.new_zeros((batch, dim, dstate))
    local x = A:new_zeros({ batch, dim, dstate })
    local ys = {}
    -- deltaA = torch.exp(torch.einsum('bdl,dn->bdln', delta, A))
    local deltaA = tide.exp(tide.einsum("bdl,dn->bdln", delta, A))
    local deltaB_u
    if not is_variable_B then
        -- deltaB_u = torch.einsum('bdl,dn,bdl->bdln', delta, B, u)
        deltaB_u = tide.einsum("bdl,dn,bdl->bdln", delta, B, u)
    else
        if B:dim() == 3 then
            deltaB_u = tide.einsum("bdl,bnl,bdl->bdln", delta, B, u)
        else
            -- B = repeat(B, "B G N L -> B (G H) N L", H=dim // B.shape[1])
            -- (Lua 5.1 and LuaJIT have no //: math.floor)
            B = einops.repeat_(B, "B G N L -> B (G H) N L",
                { H = math.floor(dim / B.shape[2]) })
            deltaB_u = tide.einsum("bdl,bdnl,bdl->bdln", delta, B, u)
        end
    end
    if is_variable_C and C:dim() == 4 then
        -- C = repeat(C, "B G N L -> B (G H) N L", H=dim // C.shape[1])
        C = einops.repeat_(C, "B G N L -> B (G H) N L", { H = math.floor(dim / C.shape[2]) })
    end
    local last_state = nil
    -- for i in range(u.shape[2]):
    for i = 1, u.shape[3] do
        -- x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
        x = deltaA[{ {}, {}, i }] * x + deltaB_u[{ {}, {}, i }]
        local y
        if not is_variable_C then
            -- y = torch.einsum('bdn,dn->bd', x, C)
            y = tide.einsum("bdn,dn->bd", x, C)
        else
            if C:dim() == 3 then
                -- y = torch.einsum('bdn,bn->bd', x, C[:, :, i])
                y = tide.einsum("bdn,bn->bd", x, C[{ {}, {}, i }])
            else
                y = tide.einsum("bdn,bdn->bd", x, C[{ {}, {}, {}, i }])
            end
        end
        -- if i == u.shape[2] - 1:
        if i == u.shape[3] then
            last_state = x
        end
        -- if y.is_complex():
        if tide.is_complex(y) then
            -- y = y.real * 2
            y = y.real * 2
        end
        -- ys.append(y)
        ys[#ys + 1] = y
    end
    -- y = torch.stack(ys, dim=2) # (batch dim L)
    local y = tide.stack(ys, 3)
    -- out = y if D is None else y + u * rearrange(D, "d -> d 1")
    local out = D == nil and y or y + u * einops.rearrange(D, "d -> d 1")
    if z ~= nil then
        out = out * F.silu(z)
    end
    -- out = out.to(dtype=dtype_in)
    out = out:to({ dtype = dtype_in })
    -- return out if not return_last_state else (out, last_state)
    if not return_last_state then return out end
    return out, last_state
end

-- causal-conv1d's causal_conv1d_interface.py, the reference causal_conv1d_fn stands for:
-- def causal_conv1d_ref(x, weight, bias=None, activation=None):
local function causal_conv1d_fn(x, weight, bias, activation)
    -- seqlen = x.shape[-1]
    local seqlen = x.shape[#x.shape]
    -- dim, width = weight.shape
    local dim, width = weight.shape[1], weight.shape[2]
    -- x = F.conv1d(x, weight.unsqueeze(1), bias, padding=width - 1, groups=dim)
    x = F.conv1d(x, weight:unsqueeze(2), bias, { padding = width - 1, groups = dim })
    -- out = x[..., :seqlen]
    local out = x[{ "...", { 1, seqlen } }]
    -- return out if activation is None else F.silu(out)
    return activation == nil and out or F.silu(out)
end

-- def mamba_inner_ref(xz, conv1d_weight, conv1d_bias, x_proj_weight, delta_proj_weight,
--     out_proj_weight, out_proj_bias, A, B=None, C=None, D=None, delta_bias=None,
--     B_proj_bias=None, C_proj_bias=None, delta_softplus=True):
local function mamba_inner_ref(xz, conv1d_weight, conv1d_bias, x_proj_weight, delta_proj_weight,
                               out_proj_weight, out_proj_bias, A, o)
    local B, C, D, delta_bias = o.B, o.C, o.D, o.delta_bias
    local B_proj_bias, C_proj_bias = o.B_proj_bias, o.C_proj_bias
    -- L = xz.shape[-1]
    local L = xz.shape[#xz.shape]
    -- delta_rank = delta_proj_weight.shape[1]
    local delta_rank = delta_proj_weight.shape[2]
    -- d_state = A.shape[-1] * (1 if not A.is_complex() else 2)
    local d_state = A.shape[#A.shape] * (tide.is_complex(A) and 2 or 1)
    -- x, z = xz.chunk(2, dim=1)
    local x, z = unpack(xz:chunk(2, 2))
    -- x = causal_conv1d_fn(x, rearrange(conv1d_weight, "d 1 w -> d w"), conv1d_bias,
    --                      activation="silu")
    x = causal_conv1d_fn(x, einops.rearrange(conv1d_weight, "d 1 w -> d w"), conv1d_bias, "silu")
    -- x_dbl = F.linear(rearrange(x, 'b d l -> (b l) d'), x_proj_weight)  # (bl d)
    local x_dbl = F.linear(einops.rearrange(x, "b d l -> (b l) d"), x_proj_weight)
    -- delta = delta_proj_weight @ x_dbl[:, :delta_rank].t()
    local delta = delta_proj_weight:matmul(x_dbl[{ {}, { 1, delta_rank } }]:t())
    -- delta = rearrange(delta, "d (b l) -> b d l", l=L)
    delta = einops.rearrange(delta, "d (b l) -> b d l", { l = L })
    if B == nil then -- variable B
        -- B = x_dbl[:, delta_rank:delta_rank + d_state]  # (bl d)
        B = x_dbl[{ {}, { delta_rank + 1, delta_rank + d_state } }]
        if B_proj_bias ~= nil then
            -- B = B + B_proj_bias.to(dtype=B.dtype)
            B = B + B_proj_bias:to({ dtype = B.dtype })
        end
        if not tide.is_complex(A) then
            -- B = rearrange(B, "(b l) dstate -> b dstate l", l=L).contiguous()
            B = einops.rearrange(B, "(b l) dstate -> b dstate l", { l = L }):contiguous()
        else
            B = einops.rearrange(B, "(b l) (dstate two) -> b dstate (l two)",
                { l = L, two = 2 }):contiguous()
        end
    end
    if C == nil then -- variable B
        -- C = x_dbl[:, -d_state:]  # (bl d)
        C = x_dbl[{ {}, { -d_state, -1 } }]
        if C_proj_bias ~= nil then
            C = C + C_proj_bias:to({ dtype = C.dtype })
        end
        if not tide.is_complex(A) then
            C = einops.rearrange(C, "(b l) dstate -> b dstate l", { l = L }):contiguous()
        else
            C = einops.rearrange(C, "(b l) (dstate two) -> b dstate (l two)",
                { l = L, two = 2 }):contiguous()
        end
    end
    -- y = selective_scan_fn(x, delta, A, B, C, D, z=z, delta_bias=delta_bias,
    --                       delta_softplus=True)
    -- (selective_scan_fn is the CUDA kernel; its reference is selective_scan_ref)
    local y = selective_scan_ref(x, delta, A, B, C, D, z, delta_bias, true)
    -- return F.linear(rearrange(y, "b d l -> b l d"), out_proj_weight, out_proj_bias)
    return F.linear(einops.rearrange(y, "b d l -> b l d"), out_proj_weight, out_proj_bias)
end

---------------------------------------------------------------------------------------------
-- inputs (the reference script's formulas) and the comparison
---------------------------------------------------------------------------------------------
local batch, dim, N, L = 2, 3, 4, 5

-- torch.arange(n, dtype=torch.float32).reshape(*shape)
local function idx(...)
    local shape, n = { ... }, 1
    for _, s in ipairs(shape) do n = n * s end
    return tide.arange(0, n, f32):view(shape)
end

-- sum, cos(0.7 k + 0.3)- and sin(1.3 k)-weighted sums over t flattened (k = 0, 1, ...)
local function summ(t)
    local v = t:detach():reshape(-1):tolist()
    local s0, s1, s2 = 0, 0, 0
    for k = 1, #v do
        s0 = s0 + v[k]
        s1 = s1 + v[k] * math.cos(0.7 * (k - 1) + 0.3)
        s2 = s2 + v[k] * math.sin(1.3 * (k - 1))
    end
    return { s0, s1, s2 }
end

local function check(want, t, what)
    assert_close_list(want, summ(t), 2e-4, what)
end

local function inputs()
    local u = (idx(batch, dim, L) * 0.37 + 0.1):sin()
    local delta = (idx(batch, dim, L) * 0.41):sin() * 0.1 + 0.2
    local z = (idx(batch, dim, L) * 0.17):cos()
    local D = idx(dim) * 0.1 + 1
    local delta_bias = idx(dim) * 0.05 - 0.1
    return u, delta, z, D, delta_bias
end

local function A_real()
    return -(idx(dim, N) * 0.25 + 0.5)
end

-- torch.view_as_real of the complex A: real -(0.5 + 0.1 k), imaginary 0.3 k
local function A_pair()
    return tide.stack({ -(idx(dim, N) * 0.1 + 0.5), idx(dim, N) * 0.3 }, -1)
end

-- (out * cos(0.5 k)).sum(), the loss the gradients are of
local function loss_of(out)
    return (out * (idx(unpack(out.shape)) * 0.5):cos()):sum()
end

describe("ported mamba selective_scan_ref, real A", function()
    it("fixed B / C (D N) with D, z, delta_bias, delta_softplus: out, last_state", function()
        local u, delta, z, D, delta_bias = inputs()
        local B = (idx(dim, N) * 0.29):cos()
        local C = (idx(dim, N) * 0.43 + 0.5):sin() * 0.5
        local out, last = selective_scan_ref(u, delta, A_real(), B, C, D, z, delta_bias, true, true)
        assert.are.same({ batch, dim, L }, out.shape)
        assert.are.same({ batch, dim, N }, last.shape)
        assert.are.equal("float32", out.dtype)
        check({ 6.18620964, -3.30251569, -0.399362921 }, out, "out")
        check({ 13.017625, -0.773317899, 1.23098828 }, last, "last_state")
    end)

    it("fixed B / C: gradients w.r.t. u, delta, A and B", function()
        local u0, delta0, z, D, delta_bias = inputs()
        local u, delta = u0:clone():requires_grad_(), delta0:clone():requires_grad_()
        local A = A_real():requires_grad_()
        local B = (idx(dim, N) * 0.29):cos():requires_grad_()
        local C = (idx(dim, N) * 0.43 + 0.5):sin() * 0.5
        local out = selective_scan_ref(u, delta, A, B, C, D, z, delta_bias, true)
        loss_of(out):backward()
        check({ 1.71621057, 5.39687466, 1.41116035 }, u.grad, "u.grad")
        check({ 1.09550223, 0.347259607, 0.090952949 }, delta.grad, "delta.grad")
        check({ -0.17138174, -0.0204004009, -0.0554546755 }, A.grad, "A.grad")
        check({ -0.331501986, -0.21698069, 0.383984358 }, B.grad, "B.grad")
    end)

    it("variable B / C (B N L) with D", function()
        local u, delta, _, D = inputs()
        local B = (idx(batch, N, L) * 0.31 + 0.2):sin() * 0.5
        local C = (idx(batch, N, L) * 0.27 - 0.4):cos()
        local out, last = selective_scan_ref(u, delta, A_real(), B, C, D, nil, nil, false, true)
        check({ 4.93823756, -4.57611223, 0.77598309 }, out, "out")
        check({ 0.117220307, 0.202327139, 0.463958454 }, last, "last_state")
    end)

    it("variable B / C (B G N L), G = 1 repeated to dim, with z", function()
        local u, delta, z = inputs()
        local B = (idx(batch, N, L) * 0.31 + 0.2):sin() * 0.5
        local C = (idx(batch, N, L) * 0.27 - 0.4):cos()
        local out, last = selective_scan_ref(u, delta, A_real(), B:unsqueeze(2), C:unsqueeze(2),
            nil, z, nil, false, true)
        assert.are.same({ batch, dim, L }, out.shape)
        check({ 0.57171853, -0.234911536, -0.0101712857 }, out, "out")
        check({ 0.117220307, 0.202327139, 0.463958454 }, last, "last_state")
    end)
end)

describe("ported mamba selective_scan_ref, complex A", function()
    local function BC()
        local B = (idx(batch, N, 2 * L) * 0.31 + 0.2):sin() * 0.5
        local C = (idx(batch, N, 2 * L) * 0.27 - 0.4):cos()
        return B, C
    end

    it("variable B / C (B N 2L) with D, z, delta_bias, delta_softplus: out, last_state",
        function()
            local u, delta, z, D, delta_bias = inputs()
            local B, C = BC()
            local A = tide.view_as_complex(A_pair())
            local out, last = selective_scan_ref(u, delta, A, B, C, D, z, delta_bias, true, true)
            assert.are.equal("float32", out.dtype)
            assert.are.equal("complex64", last.dtype)
            assert.are.same({ batch, dim, N }, last.shape)
            check({ 1.17747445, -1.54573288, -1.34523523 }, out, "out")
            check({ 0.360212497, 0.389065804, -1.77285587 }, tide.view_as_real(last),
                "view_as_real(last_state)")
        end)

    it("variable B / C: gradients w.r.t. u, delta, view_as_real(A) and B", function()
        local u0, delta0, z, D, delta_bias = inputs()
        local u, delta = u0:clone():requires_grad_(), delta0:clone():requires_grad_()
        local Ap = A_pair():requires_grad_()
        local B, C = BC()
        B:requires_grad_()
        local out = selective_scan_ref(u, delta, tide.view_as_complex(Ap), B, C, D, z,
            delta_bias, true)
        loss_of(out):backward()
        check({ -0.718602021, -0.845395395, 0.640745747 }, u.grad, "u.grad")
        check({ 0.367864966, -1.35677788, -0.24480644 }, delta.grad, "delta.grad")
        check({ 0.192228168, 0.429383051, -0.380461706 }, Ap.grad, "view_as_real(A).grad")
        check({ 0.492288232, 0.524834133, 0.115146649 }, B.grad, "B.grad")
    end)

    it("variable B / C (B G N 2L), G = 1, with D", function()
        local u, delta, _, D = inputs()
        local B, C = BC()
        local out, last = selective_scan_ref(u, delta, tide.view_as_complex(A_pair()),
            B:unsqueeze(2), C:unsqueeze(2), D, nil, nil, false, true)
        check({ -1.07069604, -3.32962199, 1.80051186 }, out, "out")
        check({ 0.126605847, 0.136280677, -2.56909865 }, tide.view_as_real(last),
            "view_as_real(last_state)")
    end)
end)

describe("ported mamba mamba_inner_ref", function()
    -- d_inner = dim, d_state = N real numbers, delta_rank 2, conv width 4, d_model 2
    local function inner(A)
        local _, _, _, _, delta_bias = inputs()
        local ds = A.shape[#A.shape] * (tide.is_complex(A) and 2 or 1)
        local xz = (idx(batch, 2 * dim, L) * 0.21 + 0.3):sin()
        local cw = (idx(dim, 1, 4) * 0.5):cos() * 0.3
        local cb = idx(dim) * 0.1
        local xpw = (idx(2 + 2 * ds, dim) * 0.13 + 1):sin() * 2
        local dpw = (idx(dim, 2) * 0.37):cos() * 0.4
        local opw = (idx(2, dim) * 0.23):sin()
        local opb = tide.tensor({ 0.1, -0.2 }, f32)
        return mamba_inner_ref(xz, cw, cb, xpw, dpw, opw, opb, A,
            { delta_bias = delta_bias })
    end

    it("real A, variable B / C from x_proj", function()
        local out = inner(A_real())
        assert.are.same({ batch, L, 2 }, out.shape)
        check({ -0.997263849, -0.00977801428, -0.0668238861 }, out, "out")
    end)

    it("complex A, variable B / C from x_proj as (l two) pairs", function()
        local out = inner(tide.view_as_complex(A_pair()[{ {}, { 1, 2 } }]))
        assert.are.same({ batch, L, 2 }, out.shape)
        check({ -0.99848295, -0.00778008774, -0.0686416857 }, out, "out")
    end)
end)
