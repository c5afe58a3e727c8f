-- tide.nn._rnn_packed: nn.RNN, nn.LSTM and nn.GRU run on a PackedSequence, as PyTorch's: the
-- recurrence goes step by step over the shrinking batch (batch_sizes), with the cells' fused
-- step (tide.nn._rnn's R.step, one autograd node a step); the output is a PackedSequence with the
-- input's batch sizes and orders, and the final states are each sequence's state after its own
-- last step (the reverse direction's after step 1), in the batch's first order. The input
-- projection of all steps is one gemm over the packed data.
local core = require("tide.core")
local autograd = require("tide.autograd")
local fused = require("tide.nn._fused")
local I = require("tide.nn._internal")
local R = require("tide.nn._rnn")
local raise = autograd.raise

local P = {}

-- one layer and direction over the packed steps (H: hidden_size): gi [N, G*H] (the input
-- projections, b_ih added), the first state h0 [B, Hp] (and the LSTM's c0 [B, H]); returns the
-- packed outputs [N, Hp] and the final h (and c), [B, .] in sorted batch order
local function layer(kind, H, gi, bs, starts, w_hh, b_hh, w_hr, h0, c0, reverse)
    local T = #bs
    local lstm, gru = kind == "lstm", kind == "gru"
    local function step(t, h, c)
        local b = bs[t]
        local gh = fused.linear(h, w_hh, b_hh)
        local g = gi:narrow(1, starts[t] + 1, b)
        if lstm then
            local hc = R.step(kind, g, gh, c)
            local hr = hc:narrow(2, 1, H)
            return w_hr and fused.linear(hr, w_hr, nil) or hr, hc:narrow(2, H + 1, H)
        end
        return R.step(kind, g, gh, gru and h or nil), nil
    end
    local outs = {}
    local h, c
    if not reverse then
        h, c = h0, c0
        local done_h, done_c = {}, {}
        for t = 1, T do
            local b, cur = bs[t], h:size(1)
            if b < cur then
                -- rows b+1..cur ended at step t-1: their states are final
                done_h[#done_h + 1] = h:narrow(1, b + 1, cur - b)
                h = h:narrow(1, 1, b)
                if c then
                    done_c[#done_c + 1] = c:narrow(1, b + 1, cur - b)
                    c = c:narrow(1, 1, b)
                end
            end
            h, c = step(t, h, c)
            outs[t] = h
        end
        -- the rows in order: those that ran to the end, then the ones that ended before
        local hs, cs = { h }, { c }
        for i = #done_h, 1, -1 do
            hs[#hs + 1] = done_h[i]
            cs[#cs + 1] = done_c[i]
        end
        h = #hs > 1 and core.cat(hs, 1) or h
        if c then
            c = #cs > 1 and core.cat(cs, 1) or c
        end
    else
        h = h0:narrow(1, 1, bs[T])
        c = c0 and c0:narrow(1, 1, bs[T])
        for t = T, 1, -1 do
            local b, cur = bs[t], h:size(1)
            if b > cur then
                -- rows cur+1..b start here (their last step), from the first state
                h = core.cat({ h, h0:narrow(1, cur + 1, b - cur) }, 1)
                if c then
                    c = core.cat({ c, c0:narrow(1, cur + 1, b - cur) }, 1)
                end
            end
            h, c = step(t, h, c)
            outs[t] = h
        end
    end
    return #outs > 1 and core.cat(outs, 1) or outs[1], h, c
end

-- the state the user gave for a packed batch of B: [L*D, B, .] in the batch's first order
local function states(m, who, x, hx, B)
    local lstm = m.kind == "lstm"
    local D = m.bidirectional and 2 or 1
    local want = { m.num_layers * D, B, m.hidden_size }
    local want_h = { want[1], B, (m.proj_size or 0) > 0 and m.proj_size or m.hidden_size }
    if hx == nil then
        local o = { dtype = x.dtype, device = x.device }
        return core.zeros(want_h, o), lstm and core.zeros(want, o) or nil, false
    end
    local h0, c0 = hx, nil
    if lstm then
        if type(hx) ~= "table" or autograd.is_tensor(hx) or hx[2] == nil then
            raise("tide: LSTM: expected the state as a list {h0, c0}")
        end
        h0, c0 = hx[1], hx[2]
        R.check_state(c0, want, x, who, "c0")
    end
    R.check_state(h0, want_h, x, who, "h0")
    return h0, c0, true
end

-- RNN, LSTM and GRU's forward on a PackedSequence: out (a PackedSequence), h_n (LSTM:
-- {h_n, c_n})
function P.forward(m, who, seq, hx)
    local lstm = m.kind == "lstm"
    local x = seq.data
    if x:dim() ~= 2 or x:size(2) ~= m.input_size then
        raise(string.format("tide: %s: expected a PackedSequence of data [N, %d] (input_size), " ..
            "got data of shape %s", who, m.input_size, I.shape_str(x.shape)))
    end
    R.check_input(x, m.input_size, 2, who)
    I.check_input(x, m.weight_ih_l0, who)
    local bs = seq:sizes()
    local starts, off = {}, 0
    for t = 1, #bs do
        starts[t] = off
        off = off + bs[t]
    end
    local B = bs[1]
    local h0, c0, given = states(m, who, x, hx, B)
    if given and seq.sorted_indices then
        -- the user's states follow the batch's first order; the steps run in sorted order
        h0 = h0:index_select(2, seq.sorted_indices)
        c0 = c0 and c0:index_select(2, seq.sorted_indices)
    end
    local D = m.bidirectional and 2 or 1
    local proj = (m.proj_size or 0) > 0
    local hn, cn = {}, {}
    local inp = x
    for l = 0, m.num_layers - 1 do
        local outs = {}
        for d = 0, D - 1 do
            local sfx = R.suffix(l, d)
            local b_ih = m["bias_ih" .. sfx]
            local k = l * D + d + 1
            local gi = fused.linear(inp, m["weight_ih" .. sfx], b_ih)
            local y, h, c = layer(m.kind, m.hidden_size, gi, bs, starts, m["weight_hh" .. sfx],
                m["bias_hh" .. sfx], proj and m["weight_hr" .. sfx] or nil, h0:select(1, k),
                lstm and c0:select(1, k) or nil, d == 1)
            outs[d + 1], hn[k], cn[k] = y, h, c
        end
        inp = R.next_input(m, l, outs, 2)
    end
    local h_n = core.stack(hn, 1)
    local c_n = lstm and core.stack(cn, 1) or nil
    if seq.unsorted_indices then
        h_n = h_n:index_select(2, seq.unsorted_indices)
        c_n = c_n and c_n:index_select(2, seq.unsorted_indices)
    end
    local out = seq:_with_data(inp)
    if lstm then
        return out, { h_n, c_n }
    end
    return out, h_n
end

return P
