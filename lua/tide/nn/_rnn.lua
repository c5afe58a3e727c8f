-- tide.nn._rnn: what RNN, LSTM, GRU and their cells share. A layer projects the input of all
-- time steps with one gemm, then runs one fused C step a time step (R.kernel_step: the hidden
-- projection's gemm, then the gates in one kernel row), recorded as one autograd node a step
-- or one a layer; both gradients (defs rnn_cell and rnn_layer, R.kernel_step_backward a step)
-- are declared here, next to their forwards. Parameters and their layouts are
-- PyTorch's: weight_ih_l<k>[_reverse] [G*H, in], weight_hh_l<k> [G*H, H], bias_ih_l<k>,
-- bias_hh_l<k> [G*H], gates i, f, g, o (LSTM) or r, z, n (GRU), all drawn from
-- U(-1/sqrt(H), 1/sqrt(H)).
local compat = require("tide._compat")
local core = require("tide.core")
local K = core._internal -- the internal kernels (tide._internal in docs/API.md)
local autograd = require("tide.autograd")
local fused = require("tide.nn._fused")
local autocast = require("tide._autocast")
local I = require("tide.nn._internal")
local S = require("tide.nn._signature")
local PackedSequence = require("tide.nn.PackedSequence")
local raise = autograd.raise

local def, needs_record, record = autograd.def, autograd.needs_record, autograd.record

local R = {}

-- gates per hidden unit of each kind
R.GATES = { rnn_tanh = 1, rnn_relu = 1, lstm = 4, gru = 3 }

local function detached(t)
    return t and t.requires_grad and t:detach() or t
end

-- the fused step's kernel rows (include/tide_kernels.def: rnn_step, lstm_step, gru_step and their
-- _backward rows), d = H. nil from a row: the device has no kernel for the dtype, and RNNs have
-- no composite to fall back on
local function stepped(row, x, ...)
    if select("#", ...) == 0 or (...) == nil then
        raise(("tide: %s: no fused kernel for %s on %s; use float32 or float64 there"):format(
            row, x.dtype, x.device))
    end
    return ...
end

-- H from a tensor's last dim of G * H values (at least 1: a size that does not divide is then
-- refused by the row, naming the shape)
local function hidden(t, G)
    return math.max(1, t:dim() > 0 and compat.idiv(t:size(t:dim()), G) or 0)
end

-- one step: out (LSTM: [h', c']) and the gates the gradient reads (nil for the plain RNN)
function R.kernel_step(kind, gi, gh, prev)
    if kind == "lstm" then
        return stepped("lstm_step", gi, K.lstm_step(gi, gh, prev, hidden(gi, 4)))
    elseif kind == "gru" then
        return stepped("gru_step", gi, K.gru_step(gi, gh, prev, hidden(gi, 3)))
    end
    return stepped("rnn_step", gi, K.rnn_step(gi, gh, hidden(gi, 1), kind == "rnn_relu"))
end

-- its gradient from the step's result and grad_out: dgi, dgh (GRU only; nil: dgi's), dprev
-- (nil for the plain RNN)
function R.kernel_step_backward(kind, saved, prev, out, grad_out)
    if kind == "lstm" then
        local dgi, dc = stepped("lstm_step_backward", out,
            K.lstm_step_backward(out, grad_out, saved, prev, hidden(out, 2)))
        return dgi, nil, dc
    elseif kind == "gru" then
        return stepped("gru_step_backward", out,
            K.gru_step_backward(out, grad_out, saved, prev, hidden(out, 1)))
    end
    return stepped("rnn_step_backward", out,
        K.rnn_step_backward(out, grad_out, hidden(out, 1), kind == "rnn_relu")), nil, nil
end

-- one fused step: out = h' [B, H] (LSTM: [B, 2H] = h', c'), from gi, gh [B, G*H] and prev
-- (LSTM: c, GRU: h, RNN: nil)
function R.step(kind, gi, gh, prev)
    if not needs_record(gi, gh, prev) then
        return (R.kernel_step(kind, gi, gh, prev))
    end
    local pd = detached(prev)
    local out, saved = R.kernel_step(kind, detached(gi), detached(gh), pd)
    local od = out:detach()
    local nd = record("rnn_cell", out, gi, gh, prev)
    nd.kind, nd.saved, nd.prev_d, nd.out_d = kind, saved, pd, od
    return out
end

-- one step's gradient from the kernel's saved gates (nd.saved) and the detached aliases of the
-- previous state and the result: LSTM and RNN share one gradient between gi and gh, GRU's
-- differ (its reset gate scales gh's n part)
def {
    name = "rnn_cell",
    reads = { 3, "out" },
    backward = function(nd, g)
        local dgi, dgh, dprev = R.kernel_step_backward(nd.kind, nd.saved, nd.prev_d, nd.out_d, g)
        return dgi, dgh or dgi, dprev
    end,
}

local function needs(x)
    return x ~= nil and x.requires_grad
end

-- the gradient of R.layer: the time loop run backwards, one fused kernel a step; the hidden
-- weights' gradient as one gemm over all steps (and the projection's, with w_hr)
local function layer_backward(nd, gY)
    local kind, H, T, rev, P = nd.kind, nd.H, nd.T, nd.reverse, nd.P
    local lstm, gru = kind == "lstm", kind == "gru"
    local Y, w, s0, whr = nd.Yd, nd.wd, nd.s0, nd.whr
    local cells = nd.cells or Y -- the fused kernel's outputs: h (before projection), c
    local carry -- the gradient of the state after the step at hand, beyond gY's
    local dgis, dghs, dhps = {}, {}, {}
    for s = T, 1, -1 do
        local t = rev and T - s + 1 or s
        local gcur = gY:select(1, t)
        if carry then
            gcur = gcur:add(carry)
        end
        if whr then
            -- through the projection h = h_raw w_hr^T
            dhps[t] = gcur:narrow(2, 1, P)
            gcur = core.cat({ dhps[t]:matmul(whr), gcur:narrow(2, P + 1, H) }, 2)
        end
        local before = s > 1 and Y:select(1, rev and t + 1 or t - 1) or s0
        local prev = lstm and before:narrow(2, P + 1, H) or (gru and before or nil)
        local dgi, dgh, dprev = R.kernel_step_backward(kind, nd.saved[t], prev,
            cells:select(1, t), gcur)
        dgh = dgh or dgi
        dgis[t], dghs[t] = dgi, dgh
        local dh = dgh:matmul(w)
        if lstm then
            carry = core.cat({ dh, dprev }, 2)
        elseif gru then
            carry = dh:add(dprev)
        else
            carry = dh
        end
    end
    local dgi_all = needs(nd[1]) and core.stack(dgis, 1) or nil
    local dw, db, dwhr
    if needs(nd[2]) or needs(nd[3]) then
        local dgh_all = (gru or not dgi_all) and core.stack(dghs, 1) or dgi_all
        local G = dgh_all:view(T * dgh_all:size(2), -1) -- [T*B, G*H]
        if needs(nd[2]) then
            -- the state each step started from, in time order
            local hs = lstm and Y:narrow(3, 1, P) or Y
            local h0 = (lstm and s0:narrow(2, 1, P) or s0):unsqueeze(1)
            local hprev = h0
            if T > 1 then
                hprev = rev and core.cat({ hs:narrow(1, 2, T - 1), h0 }, 1) or
                    core.cat({ h0, hs:narrow(1, 1, T - 1) }, 1)
            end
            dw = G:t():matmul(hprev:reshape(T * hprev:size(2), P))
        end
        if needs(nd[3]) and whr then
            local B = gY:size(2)
            dwhr = core.stack(dhps, 1):view(T * B, P):t():matmul(
                cells:narrow(3, 1, H):reshape(T * B, H))
        elseif needs(nd[3]) then
            db = G:sum(1)
        end
    end
    return dgi_all, dw, whr and dwhr or db, needs(nd[4]) and carry or nil
end

def {
    name = "rnn_layer",
    reads = { 2, 4, "out" }, -- w_hh, the first state, Y (its detached alias nd.Yd is read)
    backward = layer_backward,
}

-- the recurrence of one layer and direction over all T steps, recorded as one autograd node:
-- gi [T, B, G*H] (the input projections, b_ih added), w_hh, b_hh (or nil) and the first state
-- s0 ([B, H]; the LSTM's [B, 2H] = h0, c0). Each step: one gemm for gh, one fused kernel.
-- Returns Y [T, B, H] (the LSTM's [T, B, 2H] = h_t, c_t) in time order, whatever the direction.
-- An LSTM with projections (w_hr [P, H]) takes both biases in gi (b_hh nil), states [B, P + H]
-- and gives Y [T, B, P + H]: each step's h is the fused kernel's times w_hr^T, one more gemm.
function R.layer(kind, gi, w_hh, b_hh, s0, reverse, w_hr)
    if w_hr and b_hh then
        -- the node has room for four inputs: b_hh joins gi (the LSTM's gates add both)
        gi, b_hh = gi:add(b_hh), nil
    end
    local T, P = gi:size(1), w_hh:size(2)
    local H = w_hr and w_hr:size(2) or P
    local lstm = kind == "lstm"
    local g, w, b, st = detached(gi), detached(w_hh), detached(b_hh), detached(s0)
    local whr = detached(w_hr)
    local wt, whr_t = w:t(), whr and whr:t()
    local ys, saved, cells = {}, {}, {}
    for s = 1, T do
        local t = reverse and T - s + 1 or s
        local h = lstm and st:narrow(2, 1, P) or st
        local gh = h:matmul(wt)
        if b then
            gh:add_(b)
        end
        local prev = lstm and st:narrow(2, P + 1, H) or (kind == "gru" and h or nil)
        cells[t], saved[t] = R.kernel_step(kind, g:select(1, t), gh, prev)
        ys[t] = whr and core.cat({ cells[t]:narrow(2, 1, H):matmul(whr_t),
            cells[t]:narrow(2, H + 1, H) }, 2) or cells[t]
        st = ys[t]
    end
    local Y = core.stack(ys, 1)
    if needs_record(gi, w_hh, b_hh) or needs_record(s0, w_hr) then
        local Yd = Y:detach()
        local nd = record("rnn_layer", Y, gi, w_hh, w_hr or b_hh, s0)
        nd.kind, nd.H, nd.P, nd.T, nd.reverse = kind, H, P, T, reverse
        nd.Yd, nd.wd, nd.s0, nd.saved, nd.whr = Yd, w, detached(s0), saved, whr
        nd.cells = whr and core.stack(cells, 1) or nil
    end
    return Y
end

-- one cell step from x [B, in] and the state; returns h (and c for the LSTM)
function R.cell(kind, x, h, c, w_ih, w_hh, b_ih, b_hh)
    local H = w_hh:size(2)
    if autocast.on then -- the cells are in PyTorch's lower-precision list: one dtype for all
        h, c = autocast.lower(h, c)
    end
    local gi = fused.linear(x, w_ih, b_ih)
    local gh = fused.linear(h, w_hh, b_hh)
    if kind == "lstm" then
        local hc = R.step(kind, gi, gh, c)
        return hc:narrow(2, 1, H), hc:narrow(2, H + 1, H)
    end
    return R.step(kind, gi, gh, kind == "gru" and h or nil)
end

-- registers the four parameters of one layer and direction, in PyTorch's order, and the
-- projection weight_hr [P, H] after them when P (an LSTM's proj_size) is above 0
function R.add_params(m, suffix, in_size, H, G, bias, P)
    local bound = 1 / math.sqrt(H)
    local hdim = (P or 0) > 0 and P or H
    m:register_parameter("weight_ih" .. suffix, I.uniform_param({ G * H, in_size }, bound))
    m:register_parameter("weight_hh" .. suffix, I.uniform_param({ G * H, hdim }, bound))
    if bias then
        m:register_parameter("bias_ih" .. suffix, I.uniform_param({ G * H }, bound))
        m:register_parameter("bias_hh" .. suffix, I.uniform_param({ G * H }, bound))
    end
    if hdim ~= H then
        m:register_parameter("weight_hr" .. suffix, I.uniform_param({ P, H }, bound))
    end
end

local function shape_of(t)
    return I.shape_str(t.shape)
end

-- a state tensor given by the user: the shape wanted, the input's device and dtype
function R.check_state(t, want, x, who, what)
    if not autograd.is_tensor(t) then
        raise(string.format("tide: %s: expected %s to be a tensor, got %s", who, what, type(t)))
    end
    local ok = t:dim() == #want
    for i = 1, #want do
        ok = ok and t:size(i) == want[i]
    end
    if not ok then
        raise(string.format("tide: %s: expected %s of shape %s, got %s", who, what,
            I.shape_str(want), shape_of(t)))
    end
    -- (under autocast a state of the region's dtype beside a float32 input is cast, as in
    -- PyTorch's region)
    if t.device ~= x.device or (t.dtype ~= x.dtype and not autocast.same_cast(x, t)) then
        raise(string.format("tide: %s: expected %s on %s as %s like the input, got %s on %s",
            who, what, tostring(x.device), x.dtype, t.dtype, tostring(t.device)))
    end
end

-- the state hx (an LSTM's list {h, c}, which the caller checked is a list; else one tensor),
-- each given tensor checked against its shape wants[i] (names[i] in errors); those of an
-- unbatched input are checked without the batch dim bdim, then given it. Returns h and c,
-- batched.
local function batched_states(hx, lstm, wants, names, batched, bdim, x, who)
    local states = lstm and { hx[1], hx[2] } or { hx }
    for i, t in ipairs(states) do
        local w = wants[i]
        if not batched and autograd.is_tensor(t) then
            local unbatched = { compat.unpack(w) }
            table.remove(unbatched, bdim)
            R.check_state(t, unbatched, x, who, names[i])
            t = t:unsqueeze(bdim)
        end
        R.check_state(t, w, x, who, names[i])
        states[i] = t
    end
    return states[1], states[2]
end

-- the input x of a layer (nd 3) or a cell (nd 2), checked, and on the device of m's weight w:
-- x with the batch dim bdim added when it had none, and whether it had one
local function batched_input(m, x, w, nd, bdim, who)
    R.check_input(x, m.input_size, nd, who)
    I.check_input(x, w, who) -- its device, then its dtype: the weights', as PyTorch's
    local batched = x:dim() == nd
    if not batched then
        x = x:unsqueeze(bdim)
    end
    return x, batched
end

-- the input x: [..., in] with the dims wanted (nd or nd - 1 for an unbatched input)
function R.check_input(x, in_size, nd, who)
    I.check_tensor(x, who)
    if (x:dim() ~= nd and x:dim() ~= nd - 1) or x:size(-1) ~= in_size then
        raise(string.format("tide: %s: expected input of %d or %d dims with last dim %d " ..
            "(input_size), got shape %s", who, nd - 1, nd, in_size, shape_of(x)))
    end
    if not (x.dtype == "float32" or x.dtype == "float64") then
        raise(string.format("tide: %s: expected a float32 or float64 input, got %s", who,
            x.dtype))
    end
end

-- the parameters' suffix of layer l (from 0) and direction d (1: reverse)
function R.suffix(l, d)
    return "_l" .. l .. (d == 1 and "_reverse" or "")
end

-- layer l's output as the next layer's input: the directions side by side along dim, with
-- dropout between layers in training
function R.next_input(m, l, outs, dim)
    local y = #outs == 2 and core.cat(outs, dim) or outs[1]
    if m.dropout > 0 and m.training and l < m.num_layers - 1 then
        y = I.dropout(y, m.dropout)
    end
    return y
end

-- the whole sequence: x [T, B, in] (time-major); h0 (and c0 for the LSTM) [L*D, B, H]
-- (h0 [L*D, B, P] with an LSTM's projections); returns out [T, B, D*H] (D*P) and the lists of
-- final h (and c), one per layer and direction
function R.run(m, kind, x, h0, c0)
    local T, B, H, D = x:size(1), x:size(2), m.hidden_size, m.bidirectional and 2 or 1
    local P = m.proj_size or 0
    local proj = P > 0
    P = proj and P or H
    local G = R.GATES[kind]
    local hn, cn = {}, {}
    local inp = x
    for l = 0, m.num_layers - 1 do
        local outs_dir = {}
        for d = 0, D - 1 do
            local sfx = R.suffix(l, d)
            local w_ih, w_hh = m["weight_ih" .. sfx], m["weight_hh" .. sfx]
            local b_ih, b_hh = m["bias_ih" .. sfx], m["bias_hh" .. sfx]
            local w_hr = m["weight_hr" .. sfx]
            local k = l * D + d + 1
            local lstm = kind == "lstm"
            local s0 = lstm and core.cat({ h0:select(1, k), c0:select(1, k) }, 2) or h0:select(1, k)
            if proj and b_ih then
                -- the LSTM's gates add both biases: once, into the input projection
                b_ih, b_hh = b_ih:add(b_hh), nil
            end
            if autocast.on then -- as the cells: the state and weights in the region's dtype,
                -- cast by recorded `to`s that bring the gradients back to the parameters
                w_hh, b_hh, w_hr, s0 = autocast.lower(w_hh, b_hh, w_hr, s0)
            end
            local gi = fused.linear(inp:reshape(T * B, inp:size(3)), w_ih, b_ih):view(T, B, G * H)
            local Y = R.layer(kind, gi, w_hh, b_hh, s0, d == 1, w_hr)
            local last = Y:select(1, d == 1 and 1 or T)
            outs_dir[#outs_dir + 1] = lstm and Y:narrow(3, 1, P) or Y
            hn[k] = lstm and last:narrow(2, 1, P) or last
            cn[k] = lstm and last:narrow(2, P + 1, H) or nil
        end
        inp = R.next_input(m, l, outs_dir, 3)
    end
    return inp, hn, cn
end

-- PyTorch's mode of each kind (RNNBase's first argument, a layer's `mode`)
local MODES = { rnn_tanh = "RNN_TANH", rnn_relu = "RNN_RELU", lstm = "LSTM", gru = "GRU" }

-- PyTorch's constructor arguments (tide.nn._signature): the layers' (torch 1.13's order; RNN's
-- nonlinearity a string as argument #4 is PyTorch 2's, which puts it there) and the cells'
local LAYER_NAMES = { "input_size", "hidden_size", "num_layers", "bias", "batch_first",
    "dropout", "bidirectional" }
local RNN2_NAMES = { "input_size", "hidden_size", "num_layers", "nonlinearity", "bias",
    "batch_first", "dropout", "bidirectional" }
local SIGNATURES = {
    RNN = { names = LAYER_NAMES, required = 2, order = function(a)
        return type(a[4]) == "string" and RNN2_NAMES or LAYER_NAMES
    end },
    LSTM = { names = compat.move(LAYER_NAMES, 1, #LAYER_NAMES, 1, { [8] = "proj_size" }),
        required = 2 },
    GRU = { names = LAYER_NAMES, required = 2 },
    RNNCell = { names = { "input_size", "hidden_size", "bias", "nonlinearity" }, required = 2 },
    LSTMCell = { names = { "input_size", "hidden_size", "bias" }, required = 2 },
    GRUCell = { names = { "input_size", "hidden_size", "bias" }, required = 2 },
    RNNBase = { names = { "mode", "input_size", "hidden_size", "num_layers", "bias",
        "batch_first", "dropout", "bidirectional", "proj_size" }, required = 3 },
}

function R.signature(name)
    return SIGNATURES[name]
end

-- RNN, LSTM and GRU's shared constructor: (input_size, hidden_size[, options])
function R.init(m, who, kind, input_size, hidden_size, opts)
    local known = { "num_layers", "bias", "batch_first", "dropout", "bidirectional" }
    if who == "RNN" then
        known[#known + 1] = "nonlinearity"
    end
    opts = opts or {}
    local lstm = kind == "lstm" -- nn.LSTM, or nn.RNNBase("LSTM", ...)
    if lstm then
        known[#known + 1] = "proj_size"
    end
    core._check_options(opts, who, known)
    I.check_int(input_size, "input_size", who)
    I.check_int(hidden_size, "hidden_size", who)
    local L = I.check_int(opts.num_layers or 1, "num_layers", who)
    local p = opts.dropout or 0
    if type(p) ~= "number" or p < 0 or p > 1 then
        raise(string.format("tide: %s: expected dropout in [0, 1], got %s", who, tostring(p)))
    end
    if p > 0 and L == 1 then
        -- PyTorch's UserWarning: dropout acts between layers only, so one layer drops nothing
        require("tide._warn").once("rnn_dropout_one_layer", "dropout option adds dropout after " ..
            "all but last recurrent layer, so non-zero dropout expects num_layers greater than " ..
            "1, but got dropout=" .. tostring(p) .. " and num_layers=1")
    end
    if who == "RNN" then
        local nl = opts.nonlinearity or "tanh"
        if nl ~= "tanh" and nl ~= "relu" then
            raise(string.format("tide: RNN: nonlinearity must be \"tanh\" or \"relu\", got %s",
                tostring(nl)))
        end
        kind = "rnn_" .. nl
        m.nonlinearity = nl
    elseif kind == "rnn_tanh" or kind == "rnn_relu" then
        m.nonlinearity = kind:sub(5)
    end
    m.kind, m.mode = kind, MODES[kind]
    m.input_size, m.hidden_size, m.num_layers = input_size, hidden_size, L
    m.bias = opts.bias ~= false
    m.batch_first = opts.batch_first == true
    m.dropout = p + 0.0 -- a float, as PyTorch's float(dropout) (0.0 on Lua 5.3+)
    m.bidirectional = opts.bidirectional == true
    if lstm then
        -- h projected to proj_size values a step (0: no projection), as PyTorch's
        local P = I.check_int(opts.proj_size or 0, "proj_size", who, 0)
        if P >= hidden_size then
            raise(string.format("tide: %s: proj_size %d must be smaller than hidden_size %d " ..
                "(0 turns the projection off)", who, P, hidden_size))
        end
        m.proj_size = P
    else
        m.proj_size = 0 -- PyTorch's attribute on every RNNBase
    end
    local D = m.bidirectional and 2 or 1
    local out_size = (m.proj_size or 0) > 0 and m.proj_size or hidden_size
    -- PyTorch's name lists: _all_weights (one list a layer and direction) and
    -- _flat_weights_names (all of them, in that order)
    local all, flat = {}, {}
    for l = 0, L - 1 do
        for d = 0, D - 1 do
            local sfx = R.suffix(l, d)
            R.add_params(m, sfx, l == 0 and input_size or out_size * D, hidden_size,
                R.GATES[kind], m.bias, m.proj_size)
            local names = { "weight_ih" .. sfx, "weight_hh" .. sfx }
            if m.bias then
                names[3], names[4] = "bias_ih" .. sfx, "bias_hh" .. sfx
            end
            if m.proj_size > 0 then
                names[#names + 1] = "weight_hr" .. sfx
            end
            all[#all + 1] = names
            for _, n in ipairs(names) do
                flat[#flat + 1] = n
            end
        end
    end
    m._all_weights, m._flat_weights_names = all, flat
end

-- PyTorch's properties of RNNBase, read through the class's __index (tide.nn.RNNBase):
-- all_weights, the parameters as _all_weights lists them (one list a layer and direction),
-- and _flat_weights, those of _flat_weights_names; both read the module's current tensors
local PROPS = {
    all_weights = function(m)
        local all = {}
        for i, names in ipairs(rawget(m, "_all_weights") or {}) do
            all[i] = {}
            for j, n in ipairs(names) do
                all[i][j] = m[n]
            end
        end
        return all
    end,
    _flat_weights = function(m)
        local flat = {}
        for i, n in ipairs(rawget(m, "_flat_weights_names") or {}) do
            flat[i] = m[n]
        end
        return flat
    end,
}

function R.base_index(m, k)
    local prop = PROPS[k]
    if prop then
        return prop(m)
    end
    return getmetatable(m)[k]
end

-- RNN, LSTM and GRU's shared forward: out, h_n (LSTM: out, {h_n, c_n}); a PackedSequence
-- input runs in tide.nn._rnn_packed
function R.forward(m, who, x, hx)
    if PackedSequence.is_packed(x) then
        return require("tide.nn._rnn_packed").forward(m, who, x, hx)
    end
    local lstm = m.kind == "lstm"
    local batched
    x, batched = batched_input(m, x, m.weight_ih_l0, 3, 2, who)
    if batched and m.batch_first then
        x = x:transpose(1, 2)
    end
    local B = x:size(2)
    local D = m.bidirectional and 2 or 1
    local want = { m.num_layers * D, B, m.hidden_size }
    -- with projections h is [L*D, B, proj_size], c stays [L*D, B, hidden_size]
    local want_h = { want[1], B, (m.proj_size or 0) > 0 and m.proj_size or m.hidden_size }
    local h0, c0
    if hx ~= nil then
        if lstm and (type(hx) ~= "table" or autograd.is_tensor(hx)) then
            raise("tide: LSTM: expected the state as a list {h0, c0}, got " ..
                (autograd.is_tensor(hx) and "a tensor" or type(hx)))
        end
        h0, c0 = batched_states(hx, lstm, { want_h, want }, { "h0", "c0" }, batched, 2, x, who)
        if lstm and c0 == nil then
            raise("tide: LSTM: expected the state as a list {h0, c0}, got only h0")
        end
    else
        h0 = core.zeros(want_h, { dtype = x.dtype, device = x.device })
        c0 = lstm and core.zeros(want, { dtype = x.dtype, device = x.device }) or nil
    end
    local out, hn, cn = R.run(m, m.kind, x, h0, c0)
    local h_n = core.stack(hn, 1)
    local c_n = lstm and core.stack(cn, 1) or nil
    if not batched then
        out, h_n = out:squeeze(2), h_n:squeeze(2)
        c_n = c_n and c_n:squeeze(2)
    elseif m.batch_first then
        out = out:transpose(1, 2)
    end
    if lstm then
        return out, { h_n, c_n }
    end
    return out, h_n
end

-- PyTorch's RNNBase one, in its order (nonlinearity is not shown)
function R.extra_repr(m)
    local s = string.format("%d, %d", m.input_size, m.hidden_size)
    if (m.proj_size or 0) > 0 then s = s .. ", proj_size=" .. m.proj_size end
    if m.num_layers ~= 1 then s = s .. ", num_layers=" .. m.num_layers end
    if not m.bias then s = s .. ", bias=false" end
    if m.batch_first then s = s .. ", batch_first=true" end
    if m.dropout ~= 0 then s = s .. ", dropout=" .. m.dropout end
    if m.bidirectional then s = s .. ", bidirectional=true" end
    return s
end

-- the cells' shared constructor: (input_size, hidden_size[, {bias =, nonlinearity =}])
function R.cell_init(m, who, kind, input_size, hidden_size, opts)
    opts = opts or {}
    core._check_options(opts, who, who == "RNNCell" and { "bias", "nonlinearity" } or { "bias" })
    I.check_int(input_size, "input_size", who)
    I.check_int(hidden_size, "hidden_size", who)
    if who == "RNNCell" then
        local nl = opts.nonlinearity or "tanh"
        if nl ~= "tanh" and nl ~= "relu" then
            raise(string.format("tide: RNNCell: nonlinearity must be \"tanh\" or \"relu\", " ..
                "got %s", tostring(nl)))
        end
        kind = "rnn_" .. nl
        m.nonlinearity = nl
    end
    m.kind, m.input_size, m.hidden_size, m.bias = kind, input_size, hidden_size, opts.bias ~= false
    R.add_params(m, "", input_size, hidden_size, R.GATES[kind], m.bias)
end

-- the cells' shared forward: h (LSTMCell: h, c) from x [B, in] or [in] and the state
function R.cell_forward(m, who, x, hx)
    local lstm = m.kind == "lstm"
    local batched
    x, batched = batched_input(m, x, m.weight_ih, 2, 1, who)
    local want = { x:size(1), m.hidden_size }
    local h, c
    if hx ~= nil then
        if lstm and (type(hx) ~= "table" or autograd.is_tensor(hx) or hx[2] == nil) then
            raise("tide: LSTMCell: expected the state as a list {h, c}")
        end
        h, c = batched_states(hx, lstm, { want, want }, { "h", "c" }, batched, 1, x, who)
    else
        h = core.zeros(want, { dtype = x.dtype, device = x.device })
        c = lstm and h or nil
    end
    local h1, c1 = R.cell(m.kind, x, h, c, m.weight_ih, m.weight_hh, m.bias_ih, m.bias_hh)
    if not batched then
        h1, c1 = h1:squeeze(1), c1 and c1:squeeze(1)
    end
    if lstm then
        return h1, c1
    end
    return h1
end

function R.cell_extra_repr(m) -- PyTorch's RNNCellBase one
    local nl = m.nonlinearity and m.nonlinearity ~= "tanh" and ", nonlinearity=" .. m.nonlinearity
    return string.format("%d, %d%s%s", m.input_size, m.hidden_size, m.bias and "" or
        ", bias=false", nl or "")
end
local cell_extra_repr = R.cell_extra_repr

-- the classes nn.RNN, nn.LSTM and nn.GRU (kind "rnn_tanh", "lstm", "gru"; errors name name),
-- subclasses of nn.RNNBase, or with cell nn.RNNCell, nn.LSTMCell and nn.GRUCell, subclasses of
-- nn.RNNCellBase (PyTorch's class tree)
function R.class(name, kind, cell)
    local init, forward = R.init, R.forward
    if cell then
        init, forward = R.cell_init, R.cell_forward
    end
    local cls = require(cell and "tide.nn.RNNCellBase" or "tide.nn.RNNBase"):extend(name)
    function cls:init(input_size, hidden_size, opts)
        init(self, name, kind, input_size, hidden_size, opts)
    end
    S.define(cls, R.signature(name))
    function cls:forward(x, hx)
        return forward(self, name, x, hx)
    end
    cls.extra_repr = cell and cell_extra_repr or R.extra_repr
    return cls
end

return R
