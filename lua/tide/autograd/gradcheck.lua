-- tide.autograd.gradcheck and gradgradcheck: PyTorch 1.13's torch.autograd.gradcheck, which
-- compares the gradients autograd computes with central finite differences.
--
--     local x = tide.randn({3}, {dtype = "float64", requires_grad = true})
--     tide.autograd.gradcheck(function(t) return t:sin() * t end, {x})      -- true
--
-- gradcheck(fn, inputs[, opts]): inputs a tensor or a list of values, fn(inputs...) returns a
-- tensor, several, or a list of them. The inputs checked are the tensors that require grad
-- (float64 expected: another dtype warns once, as PyTorch's), the outputs those that require
-- grad. For each output and input, the Jacobian (a row per input element, a column per output
-- element) from autograd (one autograd.grad per output element, twice: a backward that gives
-- different values twice is not reentrant) must match the one of central differences,
-- (f(x + eps) - f(x - eps)) / (2 eps) per input element, entry by entry:
-- |analytical - numerical| <= atol + rtol * |numerical|. Backward must also give zeros for
-- zero output gradients. Returns true; a mismatch raises, naming the output, the input and
-- the entries that differ (raise_exception = false: returns false instead). fast_mode = true
-- compares v^T J u for random unit vectors u and v instead of whole Jacobians (PyTorch's fast
-- mode). Finite differences perturb the inputs in place, as PyTorch's do (fn may reach them
-- another way, as a module's parameters), and set them back exactly, also when fn raises;
-- .grad is left alone, but the inputs' version counters move. fn runs in the caller's grad
-- mode (gradgradcheck's fn calls autograd.grad inside).
--
-- gradgradcheck(fn, inputs[, grad_outputs][, opts]): gradcheck of the function that maps the
-- inputs and grad_outputs to autograd.grad(fn's outputs, the inputs that require grad,
-- grad_outputs, {create_graph = true}): second derivatives. grad_outputs (one per output that
-- requires grad) default to uniform draws in [-1, 1) that require grad, from tide's generator.
local compat = require("tide._compat")
local core = require("tide.core")
local engine = require("tide.autograd.engine")
local raise = require("tide.autograd.raise")
local warn = require("tide._warn")

local is_tensor = core.is_tensor
local FLOAT = engine.FLOAT

local M = {}

-- a failed check (not a misuse): caught by gradcheck, raised or turned into false
local FAILED = {}

local function fail(msg)
    error(setmetatable({ msg = msg }, FAILED), 0)
end

local OPTIONS = { "eps", "atol", "rtol", "raise_exception", "nondet_tol",
    "check_undefined_grad", "check_grad_dtypes", "check_batched_grad",
    "check_batched_forward_grad", "check_forward_ad", "check_backward_ad", "check_sparse_nnz",
    "fast_mode" }

-- PyTorch's checks that tide cannot run: accepted when false, refused when true
local UNSUPPORTED = {
    check_batched_grad = "needs vmap, which tide has not",
    check_batched_forward_grad = "needs forward-mode AD and vmap, which tide has not",
    check_forward_ad = "needs forward-mode AD, which tide has not",
    check_sparse_nnz = "is for sparse gradients, which tide has not (its gradients are dense)",
    check_fwd_over_rev = "needs forward-mode AD, which tide has not",
    gen_non_contig_grad_outputs = "is not supported; pass non-contiguous grad_outputs yourself",
}

local BOOLEAN = { raise_exception = true, check_undefined_grad = true, check_grad_dtypes = true,
    check_backward_ad = true, check_rev_over_rev = true, fast_mode = true }

-- opts checked (keys, types, values) with the defaults filled in
local function options(who, opts, known)
    if opts == nil then
        opts = {}
    elseif type(opts) ~= "table" or is_tensor(opts) then
        raise("tide: " .. who .. ": options must be a table such as {atol = 1e-5}, got " ..
            (is_tensor(opts) and "a tensor" or type(opts)))
    end
    core._check_options(opts, who, known)
    local o = { eps = 1e-6, atol = 1e-5, rtol = 1e-3, raise_exception = true, nondet_tol = 0.0,
        check_undefined_grad = true, check_grad_dtypes = false, check_backward_ad = true,
        check_rev_over_rev = true, fast_mode = false }
    for k, v in pairs(opts) do
        if UNSUPPORTED[k] then
            if v ~= false then
                raise(string.format("tide: %s: %s = %s %s; leave it false", who, k,
                    tostring(v), UNSUPPORTED[k]))
            end
        elseif BOOLEAN[k] then
            if type(v) ~= "boolean" then
                raise(string.format("tide: %s: expected %s to be a boolean, got %s", who, k,
                    type(v)))
            end
            o[k] = v
        else
            if type(v) ~= "number" or v ~= v or v < 0 or (k == "eps" and v == 0) then
                raise(string.format("tide: %s: expected %s to be a number %s, got %s", who, k,
                    k == "eps" and "> 0" or ">= 0", tostring(v)))
            end
            o[k] = v
        end
    end
    if not o.check_backward_ad or not o.check_rev_over_rev then
        raise(string.format("tide: %s: %s = false leaves nothing to check (tide has no " ..
            "forward-mode AD); leave it true", who,
            o.check_backward_ad and "check_rev_over_rev" or "check_backward_ad"))
    end
    return o
end

-- inputs as a list and its length (a tensor is a list of one; a packed list keeps its n)
local function input_list(who, inputs)
    if is_tensor(inputs) then
        return { inputs }, 1
    elseif type(inputs) ~= "table" then
        raise("tide: " .. who .. ": expected inputs to be a tensor or a list, got " ..
            type(inputs))
    end
    return inputs, inputs.n or #inputs
end

-- the positions of the inputs that require grad, checked (PyTorch's _check_inputs)
local function checked_inputs(who, xs, n)
    local pos = {}
    for i = 1, n do
        local x = xs[i]
        if is_tensor(x) and x.requires_grad then
            if x.dtype ~= "float64" then
                warn.once("gradcheck.float64", string.format("autograd.gradcheck: input %d " ..
                    "requires grad and is %s, not float64: the check will likely fail unless " ..
                    "every input is float64 (convert with x:double())", i, x.dtype))
            end
            local shape, strides = x.shape, x:stride()
            for d = 1, #shape do
                if strides[d] == 0 and shape[d] > 1 then
                    raise(string.format("tide: %s: input %d has a dimension with stride 0 (its " ..
                        "elements share memory), so finite differences cannot perturb them " ..
                        "one by one; pass x:contiguous()", who, i))
                end
            end
            pos[#pos + 1] = i
        end
    end
    if #pos == 0 then
        raise("tide: " .. who .. ": no input requires grad; create the inputs to check with " ..
            "{dtype = \"float64\", requires_grad = true}")
    end
    return pos
end

-- fn's results as a list and its length: several tensors, or one list of them
local function outputs_of(who, fn, xs, n)
    local r = compat.pack(fn(compat.unpack(xs, 1, n)))
    local outs, count = r, r.n
    if r.n == 1 and type(r[1]) == "table" and not is_tensor(r[1]) then
        outs = r[1]
        count = outs.n or #outs
    elseif r.n == 0 then
        raise("tide: " .. who .. ": fn returned nothing; return its result (a tensor, several " ..
            "or a list of them)")
    end
    for k = 1, count do
        if not is_tensor(outs[k]) then
            raise(string.format("tide: %s: fn's result %d is a %s; fn must return tensors", who,
                k, type(outs[k])))
        end
    end
    return outs, count
end

-- a tensor's values as a flat list of Lua numbers
local function values(t)
    return t:detach():to("cpu"):to("float64"):reshape(-1):totable()
end

-- "[2][1]": the subscript of flat element e (1-based) of a tensor of shape
local function subscript(shape, e)
    local parts, rest = {}, e - 1
    for d = #shape, 1, -1 do
        parts[d] = "[" .. (rest % shape[d] + 1) .. "]"
        rest = compat.idiv(rest, shape[d])
    end
    return table.concat(parts)
end

local function fmt(v)
    return string.format("%.10g", v)
end

-- ---- the analytical side ----

-- the gradients of the inputs at positions pos of out for grad_output go (nil where unused),
-- retaining the graph
local function vjp(out, go, xs, pos)
    local ins = {}
    for q = 1, #pos do
        ins[q] = xs[pos[q]]
    end
    return engine.grad({ out }, ins, { grad_outputs = { go }, retain_graph = true,
        allow_unused = true })
end

-- checks a gradient gs[q] returned for input x (PyTorch's _stack_and_check_tensors)
local function check_grad(g, x, i, o)
    if g == nil then
        return
    end
    local gs, xs = g.shape, x.shape
    local same = #gs == #xs
    for d = 1, #xs do
        same = same and gs[d] == xs[d]
    end
    if not same then
        fail(string.format("the analytical gradient of input %d has shape {%s}, the input " ..
            "{%s}; a backward formula returns a gradient of the wrong shape",
            i, table.concat(gs, ", "), table.concat(xs, ", ")))
    end
    if o.check_grad_dtypes and g.dtype ~= x.dtype then
        fail(string.format("the gradient of input %d is %s, the input %s (check_grad_dtypes); " ..
            "a backward formula returns a gradient of the wrong dtype", i, g.dtype, x.dtype))
    end
end

-- J[q][e][j]: d out[j] / d input pos[q][e], one autograd.grad per output element
local function analytical_jacobian(out, xs, pos, o)
    local J, m = {}, out:numel()
    for q = 1, #pos do
        J[q] = {}
        for e = 1, xs[pos[q]]:numel() do
            J[q][e] = {}
        end
    end
    for j = 1, m do
        local go = core.zeros(out.shape, { dtype = out.dtype, device = out.device })
        go:view(-1)[j] = 1
        local gs = vjp(out, go, xs, pos)
        for q = 1, #pos do
            local x = xs[pos[q]]
            check_grad(gs[q], x, pos[q], o)
            local v = gs[q] and values(gs[q])
            for e = 1, x:numel() do
                J[q][e][j] = v and v[e] or 0
            end
        end
    end
    return J
end

-- the largest difference between two analytical results (lists, nested alike)
local function max_diff(a, b)
    if type(a) == "number" then
        local d = math.abs(a - b)
        return d == d and d or math.huge
    end
    local m = 0
    for k = 1, #a do
        m = math.max(m, max_diff(a[k], b[k]))
    end
    return m
end

local function check_reentrant(a1, a2, o)
    local d = max_diff(a1, a2)
    if d > o.nondet_tol then
        fail(string.format("backward is not reentrant: running it twice with the same input " ..
            "and grad_output gave values %s apart (nondet_tol = %s); make the backward " ..
            "deterministic, or pass {nondet_tol = %s} if it is so on purpose", fmt(d),
            fmt(o.nondet_tol), fmt(d)))
    end
end

-- backward of zero output gradients must give zeros (PyTorch's "backward not multiplied by
-- grad_output"), of the inputs' dtype, device and shape; the graph is freed after
local function check_zero_grad(outs, diff, xs, pos)
    local os, gos, ins = {}, {}, {}
    for k = 1, #diff do
        local out = outs[diff[k]]
        os[k] = out
        gos[k] = core.zeros(out.shape, { dtype = out.dtype, device = out.device })
    end
    for q = 1, #pos do
        ins[q] = xs[pos[q]]
    end
    local gs = engine.grad(os, ins, { grad_outputs = gos, allow_unused = true })
    for q = 1, #pos do
        local g, x = gs[q], ins[q]
        if g ~= nil then
            if g.device ~= x.device then
                fail(string.format("the gradient of input %d is on %s, the input on %s",
                    pos[q], tostring(g.device), tostring(x.device)))
            end
            local nz = g:ne(0):any():item()
            if nz then
                fail(string.format("backward not multiplied by grad_output: with zero output " ..
                    "gradients the gradient of input %d is not zero; a backward formula must " ..
                    "scale what it returns by its incoming gradient", pos[q]))
            end
        end
    end
end

-- ---- the numerical side ----

-- the inputs are perturbed in place, as PyTorch's are (fn may read a tensor it was given
-- through another way, a module's parameter), with grad mode off for the write; their values
-- are set back exactly (their version counters move: a graph recorded before the call that
-- read them cannot run backward after it)
local function writing(fn, ...)
    local prev = core.set_grad_enabled(false)
    local ok, err = pcall(fn, ...)
    core.set_grad_enabled(prev)
    if not ok then
        error(err, 0)
    end
end

-- get(e) and set(e, v) of flat element e of x (1-based, row-major)
local function element_access(x)
    local d = x:detach()
    if d:is_contiguous() then
        local flat = d:view(-1)
        return function(e)
            return flat[e]:item()
        end, function(e, v)
            writing(function() flat[e] = v end)
        end
    end
    local shape = x.shape
    local function at(e) -- the 0-d view of element e
        local t, rest = d, e - 1
        local idx = {}
        for k = #shape, 1, -1 do
            idx[k] = rest % shape[k] + 1
            rest = compat.idiv(rest, shape[k])
        end
        for k = 1, #shape do
            t = t:select(1, idx[k])
        end
        return t
    end
    return function(e)
        return at(e):item()
    end, function(e, v)
        writing(function() at(e):fill_(v) end)
    end
end

-- the values of the floating-point outputs of fn at ys (nil for the others)
local function evaluate(who, fn, ys, n)
    local outs, count = outputs_of(who, fn, ys, n)
    local r = {}
    for k = 1, count do
        r[k] = FLOAT[outs[k].dtype] and values(outs[k]) or false
    end
    return r
end

-- N[q][k][e][j]: d out k [j] / d input pos[q][e] by central differences
local function numerical_jacobian(who, fn, xs, n, pos, eps)
    local N = {}
    for q = 1, #pos do
        local x = xs[pos[q]]
        local get, set = element_access(x)
        N[q] = {}
        for e = 1, x:numel() do
            local orig = get(e)
            set(e, orig - eps)
            local ok, a = pcall(evaluate, who, fn, xs, n)
            local b
            if ok then
                set(e, orig + eps)
                ok, b = pcall(evaluate, who, fn, xs, n)
                a = ok and a or b
            end
            set(e, orig) -- (also when fn raised)
            if not ok then
                error(a, 0)
            end
            for k = 1, #a do
                N[q][k] = N[q][k] or {}
                local col = {}
                if a[k] then
                    for j = 1, #a[k] do
                        col[j] = (b[k][j] - a[k][j]) / (2 * eps)
                    end
                end
                N[q][k][e] = col
            end
        end
    end
    return N
end

-- ---- comparing ----

local MAX_LISTED = 5

-- the entries of the Jacobians of output k and input i that differ (A: analytical, nj:
-- numerical, both [e][j]); raises naming them (after o.note, fast mode's, when set)
local function compare(A, nj, k, i, out, x, o)
    local bad, total = {}, 0
    for e = 1, #nj do
        for j = 1, #nj[e] do
            total = total + 1
            local a, nv = A[e][j], nj[e][j]
            if not (math.abs(a - nv) <= o.atol + o.rtol * math.abs(nv)) then
                bad[#bad + 1] = string.format("d out%s / d in%s: numerical %s, analytical %s",
                    subscript(out.shape, j), subscript(x.shape, e), fmt(nv), fmt(a))
            end
        end
    end
    local nbad = #bad
    if nbad == 0 then
        return
    end
    local more = nbad > MAX_LISTED and string.format("; and %d more", nbad - MAX_LISTED) or ""
    for r = nbad, MAX_LISTED + 1, -1 do
        bad[r] = nil
    end
    fail(string.format("Jacobian mismatch for output %d with respect to input %d%s: %s%s " ..
        "(%d of %d entries differ by more than atol + rtol * |numerical|, atol = %s, " ..
        "rtol = %s); check the backward formula of the ops fn uses (an autograd.Function's " ..
        "backward, an autograd.def's), or loosen atol and rtol where fn is ill-conditioned",
        k, i, o.note or "", table.concat(bad, "; "), more, nbad, total, fmt(o.atol),
        fmt(o.rtol)))
end

-- no output requires grad: every numerical derivative must be zero (PyTorch's rule)
local function check_no_differentiable(who, fn, xs, n, pos, outs, o)
    local N = numerical_jacobian(who, fn, xs, n, pos, o.eps)
    for q = 1, #pos do
        for k, nk in pairs(N[q]) do
            for e = 1, #nk do
                for j = 1, #nk[e] do
                    if nk[e][j] ~= 0 then
                        fail(string.format("no output of fn requires grad, but output %d " ..
                            "changes with input %d (d out%s / d in%s = %s numerically); fn " ..
                            "cuts the graph (detach, no_grad, a cast to an integer dtype), or " ..
                            "grad mode is off", k, pos[q], subscript(outs[k].shape, j),
                            subscript(xs[pos[q]].shape, e), fmt(nk[e][j])))
                    end
                end
            end
        end
    end
end

-- the whole Jacobians, entry by entry (PyTorch's slow mode)
local function slow(who, fn, xs, n, pos, outs, diff, o)
    local A = {}
    for d = 1, #diff do
        local out = outs[diff[d]]
        local a1 = analytical_jacobian(out, xs, pos, o)
        check_reentrant(a1, analytical_jacobian(out, xs, pos, o), o)
        A[d] = a1
    end
    check_zero_grad(outs, diff, xs, pos)
    local N = numerical_jacobian(who, fn, xs, n, pos, o.eps)
    for d = 1, #diff do
        local k = diff[d]
        for q = 1, #pos do
            compare(A[d][q], N[q][k], k, pos[q], outs[k], xs[pos[q]], o)
        end
    end
end

-- random unit vectors of n elements (float64 lists), drawn from a fixed seed with tide's
-- generator set back after (PyTorch's fast mode draws from a generator of its own)
local function unit_vectors(sizes)
    local state = core._rng_state()
    core.manual_seed(67280421310721)
    local vs = {}
    for k = 1, #sizes do
        local v = core.rand({ sizes[k] }, { dtype = "float64", device = "cpu" })
        local norm = v:norm():item()
        vs[k] = norm > 0 and v:div(norm):totable() or v:totable()
    end
    core._set_rng_state(state)
    return vs
end

local function dot(a, b)
    local s = 0
    for i = 1, #a do
        s = s + a[i] * b[i]
    end
    return s
end

local function sum(a)
    local s = 0
    for i = 1, #a do
        s = s + a[i]
    end
    return s
end

-- v^T J u for random unit u (per input) and v (per output), PyTorch's fast mode; a mismatch
-- computes the whole Jacobians of that pair for the message
local function fast(who, fn, xs, n, pos, outs, diff, o)
    local sizes = {}
    for q = 1, #pos do
        sizes[q] = xs[pos[q]]:numel()
    end
    for d = 1, #diff do
        sizes[#pos + d] = outs[diff[d]]:numel()
    end
    local vecs = unit_vectors(sizes)
    local U, V = {}, {}
    for q = 1, #pos do
        U[q] = vecs[q]
    end
    for d = 1, #diff do
        V[d] = vecs[#pos + d]
    end
    -- analytical: u . (v^T J) per output and input, twice
    local A = {}
    for d = 1, #diff do
        local out = outs[diff[d]]
        local go = core.tensor(V[d], { dtype = out.dtype, device = out.device }):view(out.shape)
        local runs = {}
        for r = 1, 2 do
            local gs = vjp(out, go, xs, pos)
            runs[r] = {}
            for q = 1, #pos do
                check_grad(gs[q], xs[pos[q]], pos[q], o)
                runs[r][q] = gs[q] and dot(values(gs[q]), U[q]) or 0
            end
        end
        check_reentrant(runs[1], runs[2], o)
        A[d] = runs[1]
    end
    check_zero_grad(outs, diff, xs, pos)
    -- numerical: v . (f(x + eps u) - f(x - eps u)) / (2 eps)
    for q = 1, #pos do
        local x = xs[pos[q]]:detach()
        local orig = x:clone()
        local u = core.tensor(U[q], { dtype = x.dtype, device = x.device }):view(x.shape)
        writing(x.copy_, x, orig - u * o.eps)
        local ok, a = pcall(evaluate, who, fn, xs, n)
        local b
        if ok then
            writing(x.copy_, x, orig + u * o.eps)
            ok, b = pcall(evaluate, who, fn, xs, n)
            a = ok and a or b
        end
        writing(x.copy_, x, orig)
        if not ok then
            error(a, 0)
        end
        for d = 1, #diff do
            local k = diff[d]
            local ju = {}
            for j = 1, #a[k] do
                ju[j] = (b[k][j] - a[k][j]) / (2 * o.eps)
            end
            local nv, av = dot(V[d], ju), A[d][q]
            local atol = o.atol * sum(U[q]) * sum(V[d]) -- PyTorch's adjusted atol
            if not (math.abs(av - nv) <= atol + o.rtol * math.abs(nv)) then
                -- the whole Jacobians of the pair, from a new graph, say which entries differ
                local note = string.format(" (fast mode: v^T J u numerical %s, analytical %s)",
                    fmt(nv), fmt(av))
                local again = outputs_of(who, fn, xs, n)
                slow(who, fn, xs, n, { pos[q] }, again, { k },
                    setmetatable({ note = note }, { __index = o }))
                fail(string.format("Jacobian mismatch for output %d with respect to input " ..
                    "%d%s; entry by entry the Jacobians agree within atol and rtol, so the check " ..
                    "passes without fast_mode", k, pos[q], note))
            end
        end
    end
end

local function run(who, fn, inputs, o)
    if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
        raise("tide: " .. who .. ": expected a function, got " .. type(fn))
    end
    local xs, n = input_list(who, inputs)
    local pos = checked_inputs(who, xs, n)
    local outs, count = outputs_of(who, fn, xs, n)
    local diff = {}
    for k = 1, count do
        if outs[k].requires_grad then
            diff[#diff + 1] = k
        end
    end
    if #diff == 0 then
        check_no_differentiable(who, fn, xs, n, pos, outs, o)
    elseif o.fast_mode then
        fast(who, fn, xs, n, pos, outs, diff, o)
    else
        slow(who, fn, xs, n, pos, outs, diff, o)
    end
    -- (check_undefined_grad: tide has no undefined gradients, a formula always receives a
    -- tensor, so zero output gradients, checked above, are all there is to check)
    return true
end

-- runs the check; a failure raises at the user's line, or gives false
local function checked(who, fn, inputs, o)
    local ok, err = pcall(run, who, fn, inputs, o)
    if ok then
        return true
    end
    if getmetatable(err) ~= FAILED then
        error(err, 0) -- a misuse (raised at the user's line) or fn's own error
    end
    if not o.raise_exception then
        return false
    end
    raise("tide: " .. who .. ": " .. err.msg)
end

function M.gradcheck(fn, inputs, opts, ...)
    if select("#", ...) > 0 then
        raise("tide: autograd.gradcheck: expected (fn, inputs[, options]), got more arguments")
    end
    local o = options("autograd.gradcheck", opts, OPTIONS)
    return checked("autograd.gradcheck", fn, inputs, o)
end

local GG_OPTIONS = { "eps", "atol", "rtol", "gen_non_contig_grad_outputs", "raise_exception",
    "nondet_tol", "check_undefined_grad", "check_grad_dtypes", "check_batched_grad",
    "check_fwd_over_rev", "check_rev_over_rev", "fast_mode" }

-- true when v is grad_outputs (a tensor or a list of them), not an options table
local function is_grad_outputs(v)
    return is_tensor(v) or (type(v) == "table" and is_tensor(v[1]))
end

function M.gradgradcheck(fn, inputs, grad_outputs, opts, ...)
    local who = "autograd.gradgradcheck"
    if select("#", ...) > 0 then
        raise("tide: " .. who .. ": expected (fn, inputs[, grad_outputs][, options]), got " ..
            "more arguments")
    end
    if opts == nil and grad_outputs ~= nil and not is_grad_outputs(grad_outputs) then
        grad_outputs, opts = nil, grad_outputs
    elseif grad_outputs ~= nil and not is_grad_outputs(grad_outputs) then
        raise("tide: " .. who .. ": expected grad_outputs to be a tensor or a list of tensors, " ..
            "got " .. type(grad_outputs))
    end
    local o = options(who, opts, GG_OPTIONS)
    if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
        raise("tide: " .. who .. ": expected a function, got " .. type(fn))
    end
    local xs, n = input_list(who, inputs)
    local gos
    if grad_outputs == nil then
        -- PyTorch's make_tensor(low = -1, high = 1, requires_grad = true) per output that
        -- requires grad
        local outs, count = outputs_of(who, fn, xs, n)
        gos = {}
        for k = 1, count do
            local out = outs[k]
            if out.requires_grad then
                local dt = FLOAT[out.dtype] and out.dtype or "float64"
                local g = core.rand(out.shape, { dtype = dt, device = out.device }):mul(2):sub(1)
                g:requires_grad_(true)
                gos[#gos + 1] = g
            end
        end
    else
        gos = is_tensor(grad_outputs) and { grad_outputs } or grad_outputs
    end
    local ng = #gos
    local diff = {}
    for i = 1, n do
        if is_tensor(xs[i]) and xs[i].requires_grad then
            diff[i] = true
        end
    end
    -- the inputs' gradients, recorded: a function of the inputs and grad_outputs
    local function grads(...)
        local args = compat.pack(...)
        local ins = {}
        for i = 1, n do
            if diff[i] then
                ins[#ins + 1] = args[i]
            end
        end
        local outs, count = outputs_of(who, fn, args, n)
        local douts = {}
        for k = 1, count do
            if outs[k].requires_grad then
                douts[#douts + 1] = outs[k]
            end
        end
        if #douts ~= ng then
            raise(string.format("tide: %s: fn has %d outputs that require grad and %d " ..
                "grad_outputs were given; give one per output", who, #douts, ng))
        end
        local gos_now = {}
        for k = 1, ng do
            gos_now[k] = args[n + k]
        end
        local gs = engine.grad(douts, ins, { grad_outputs = gos_now, create_graph = true,
            allow_unused = true })
        local r = {}
        for q = 1, #ins do
            if gs[q] ~= nil then
                r[#r + 1] = gs[q]
            end
        end
        return r
    end
    local all = {}
    for i = 1, n do
        all[i] = xs[i]
    end
    for k = 1, ng do
        all[n + k] = gos[k]
    end
    all.n = n + ng
    return checked(who, grads, all, o)
end

return M
