-- ported_scripts121_spec.lua — fundamentalvision/Deformable-DETR's multi-scale deformable
-- attention: models/ops/functions/ms_deform_attn_func.py's ms_deform_attn_core_pytorch (value
-- split by level, grids 2 * loc - 1, F.grid_sample bilinear / zeros / align_corners=False, the
-- attention weights' stack / flatten / sum), models/ops/modules/ms_deform_attn.py's MSDeformAttn
-- (_reset_parameters' cos/sin grid_init, forward with a padding mask and 2-d or 4-d reference
-- points; the pure-PyTorch core stands for the CUDA MSDeformAttnFunction, as the repo's test.py
-- does) and models/deformable_transformer.py's get_valid_ratio and get_reference_points, ported
-- line for line at tiny sizes (d_model 8, 2 levels of 4x4 and 2x2, 2 heads, 2 points, batch 2,
-- 3 queries), then 2 Adam steps. The Python line stands above each Lua line that differs from it.
-- Dims are 1-based. PyTorch 1.13's values (float64) are digests: { sum, sum of t * sin(0.7 i +
-- 0.3) over the flat 0-based index i, sum of |t| }.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")

-- from torch.nn.init import xavier_uniform_, constant_
local xavier_uniform_, constant_ = nn.init.xavier_uniform_, nn.init.constant_

local DT = tide.float64

local function digest(t)
    t = t:detach():reshape(-1):to(DT)
    local w = tide.sin(tide.arange(t:numel(), { dtype = DT }) * 0.7 + 0.3)
    return { t:sum():item(), (t * w):sum():item(), t:abs():sum():item() }
end

local function assert_digest(t, want, what)
    ported.assert_close_list(want, digest(t), 1e-9, what)
end

---------------------------------------------------------------------------------------------
-- models/ops/functions/ms_deform_attn_func.py
---------------------------------------------------------------------------------------------
-- def ms_deform_attn_core_pytorch(value, value_spatial_shapes, sampling_locations,
--                                 attention_weights):
local function ms_deform_attn_core_pytorch(value, value_spatial_shapes, sampling_locations,
                                           attention_weights)
    -- N_, S_, M_, D_ = value.shape
    local N_, _, M_, D_ = unpack(value.shape)
    -- _, Lq_, M_, L_, P_, _ = sampling_locations.shape
    local _, Lq_, _, L_, P_ = unpack(sampling_locations.shape)
    -- (the spatial shapes, an int64 tensor {L, 2}, as a Lua list of {H, W})
    local shapes = value_spatial_shapes:tolist()
    -- value_list = value.split([H_ * W_ for H_, W_ in value_spatial_shapes], dim=1)
    local sizes = {}
    for l, hw in ipairs(shapes) do sizes[l] = hw[1] * hw[2] end
    local value_list = value:split(sizes, 2)
    local sampling_grids = 2 * sampling_locations - 1
    local sampling_value_list = {}
    -- for lid_, (H_, W_) in enumerate(value_spatial_shapes):
    for lid_, hw in ipairs(shapes) do
        local H_, W_ = hw[1], hw[2]
        -- N_, H_*W_, M_, D_ -> N_, H_*W_, M_*D_ -> N_, M_*D_, H_*W_ -> N_*M_, D_, H_, W_
        -- value_l_ = value_list[lid_].flatten(2).transpose(1, 2).reshape(N_*M_, D_, H_, W_)
        local value_l_ = value_list[lid_]:flatten(3):transpose(2, 3):reshape(N_ * M_, D_, H_, W_)
        -- N_, Lq_, M_, P_, 2 -> N_, M_, Lq_, P_, 2 -> N_*M_, Lq_, P_, 2
        -- sampling_grid_l_ = sampling_grids[:, :, :, lid_].transpose(1, 2).flatten(0, 1)
        local sampling_grid_l_ = sampling_grids:select(4, lid_):transpose(2, 3):flatten(1, 2)
        -- N_*M_, D_, Lq_, P_
        -- sampling_value_l_ = F.grid_sample(value_l_, sampling_grid_l_,
        --     mode='bilinear', padding_mode='zeros', align_corners=False)
        local sampling_value_l_ = F.grid_sample(value_l_, sampling_grid_l_,
            { mode = "bilinear", padding_mode = "zeros", align_corners = false })
        -- sampling_value_list.append(sampling_value_l_)
        sampling_value_list[#sampling_value_list + 1] = sampling_value_l_
    end
    -- (N_, Lq_, M_, L_, P_) -> (N_, M_, Lq_, L_, P_) -> (N_, M_, 1, Lq_, L_*P_)
    -- attention_weights = attention_weights.transpose(1, 2).reshape(N_*M_, 1, Lq_, L_*P_)
    attention_weights = attention_weights:transpose(2, 3):reshape(N_ * M_, 1, Lq_, L_ * P_)
    -- output = (torch.stack(sampling_value_list, dim=-2).flatten(-2) * attention_weights)
    --     .sum(-1).view(N_, M_*D_, Lq_)
    local output = (tide.stack(sampling_value_list, -2):flatten(-2) * attention_weights)
        :sum(-1):view(N_, M_ * D_, Lq_)
    -- return output.transpose(1, 2).contiguous()
    return output:transpose(2, 3):contiguous()
end

---------------------------------------------------------------------------------------------
-- models/ops/modules/ms_deform_attn.py
---------------------------------------------------------------------------------------------
-- def _is_power_of_2(n):
local function _is_power_of_2(n)
    -- if (not isinstance(n, int)) or (n < 0):
    if type(n) ~= "number" or n % 1 ~= 0 or n < 0 then
        error(string.format("invalid input for _is_power_of_2: %s (type: %s)", n, type(n)))
    end
    -- return (n & (n-1) == 0) and n != 0   (no & in Lua 5.1: a power of 2 halves down to 1)
    if n == 0 then return false end
    while n % 2 == 0 do n = n / 2 end
    return n == 1
end

-- class MSDeformAttn(nn.Module):
local MSDeformAttn = nn.Module:extend("MSDeformAttn")

-- def __init__(self, d_model=256, n_levels=4, n_heads=8, n_points=4):
function MSDeformAttn:init(d_model, n_levels, n_heads, n_points)
    d_model, n_levels = d_model or 256, n_levels or 4
    n_heads, n_points = n_heads or 8, n_points or 4
    if d_model % n_heads ~= 0 then
        error(string.format("d_model must be divisible by n_heads, but got %d and %d",
            d_model, n_heads))
    end
    -- _d_per_head = d_model // n_heads
    local _d_per_head = math.floor(d_model / n_heads)
    -- if not _is_power_of_2(_d_per_head): warnings.warn("You'd better set d_model ...")
    if not _is_power_of_2(_d_per_head) then
        io.stderr:write("You'd better set d_model in MSDeformAttn to make the dimension of each "
            .. "attention head a power of 2 which is more efficient in our CUDA implementation.\n")
    end
    self.im2col_step = 64
    self.d_model = d_model
    self.n_levels = n_levels
    self.n_heads = n_heads
    self.n_points = n_points
    self.sampling_offsets = nn.Linear(d_model, n_heads * n_levels * n_points * 2)
    self.attention_weights = nn.Linear(d_model, n_heads * n_levels * n_points)
    self.value_proj = nn.Linear(d_model, d_model)
    self.output_proj = nn.Linear(d_model, d_model)
    self:_reset_parameters()
end

-- def _reset_parameters(self):
function MSDeformAttn:_reset_parameters()
    constant_(self.sampling_offsets.weight.data, 0)
    -- thetas = torch.arange(self.n_heads, dtype=torch.float32) * (2.0 * math.pi / self.n_heads)
    local thetas = tide.arange(self.n_heads, { dtype = tide.float32 })
        * (2.0 * math.pi / self.n_heads)
    -- grid_init = torch.stack([thetas.cos(), thetas.sin()], -1)
    local grid_init = tide.stack({ thetas:cos(), thetas:sin() }, -1)
    -- grid_init = (grid_init / grid_init.abs().max(-1, keepdim=True)[0])
    --     .view(self.n_heads, 1, 1, 2).repeat(1, self.n_levels, self.n_points, 1)
    grid_init = (grid_init / (grid_init:abs():max(-1, true))):view(self.n_heads, 1, 1, 2)
    grid_init = grid_init["repeat"](grid_init, 1, self.n_levels, self.n_points, 1)
    -- for i in range(self.n_points):
    for i = 1, self.n_points do
        -- grid_init[:, :, i, :] *= i + 1
        grid_init:select(3, i):mul_(i)
    end
    tide.no_grad(function()
        -- self.sampling_offsets.bias = nn.Parameter(grid_init.view(-1))
        self.sampling_offsets.bias = nn.Parameter(grid_init:view(-1))
    end)
    constant_(self.attention_weights.weight.data, 0)
    constant_(self.attention_weights.bias.data, 0)
    xavier_uniform_(self.value_proj.weight.data)
    constant_(self.value_proj.bias.data, 0)
    xavier_uniform_(self.output_proj.weight.data)
    constant_(self.output_proj.bias.data, 0)
end

-- def forward(self, query, reference_points, input_flatten, input_spatial_shapes,
--             input_level_start_index, input_padding_mask=None):
function MSDeformAttn:forward(query, reference_points, input_flatten, input_spatial_shapes,
                              input_level_start_index, input_padding_mask) -- luacheck: ignore
    -- N, Len_q, _ = query.shape
    local N, Len_q = unpack(query.shape)
    -- N, Len_in, _ = input_flatten.shape
    local _, Len_in = unpack(input_flatten.shape)
    -- assert (input_spatial_shapes[:, 0] * input_spatial_shapes[:, 1]).sum() == Len_in
    assert((input_spatial_shapes:select(2, 1) * input_spatial_shapes:select(2, 2)):sum():item()
        == Len_in)

    local value = self.value_proj(input_flatten)
    -- if input_padding_mask is not None:
    if input_padding_mask ~= nil then
        -- value = value.masked_fill(input_padding_mask[..., None], float(0))
        value = value:masked_fill(input_padding_mask:unsqueeze(-1), 0)
    end
    -- value = value.view(N, Len_in, self.n_heads, self.d_model // self.n_heads)
    value = value:view(N, Len_in, self.n_heads, math.floor(self.d_model / self.n_heads))
    -- sampling_offsets = self.sampling_offsets(query).view(N, Len_q, self.n_heads,
    --     self.n_levels, self.n_points, 2)
    local sampling_offsets = self.sampling_offsets(query):view(N, Len_q, self.n_heads,
        self.n_levels, self.n_points, 2)
    -- attention_weights = self.attention_weights(query).view(N, Len_q, self.n_heads,
    --     self.n_levels * self.n_points)
    local attention_weights = self.attention_weights(query):view(N, Len_q, self.n_heads,
        self.n_levels * self.n_points)
    -- attention_weights = F.softmax(attention_weights, -1).view(N, Len_q, self.n_heads,
    --     self.n_levels, self.n_points)
    attention_weights = F.softmax(attention_weights, -1):view(N, Len_q, self.n_heads,
        self.n_levels, self.n_points)
    -- N, Len_q, n_heads, n_levels, n_points, 2
    local sampling_locations
    -- if reference_points.shape[-1] == 2:
    if reference_points:size(-1) == 2 then
        -- offset_normalizer = torch.stack([input_spatial_shapes[..., 1],
        --     input_spatial_shapes[..., 0]], -1)
        local offset_normalizer = tide.stack({ input_spatial_shapes:select(-1, 2),
            input_spatial_shapes:select(-1, 1) }, -1)
        -- sampling_locations = reference_points[:, :, None, :, None, :] \
        --     + sampling_offsets / offset_normalizer[None, None, None, :, None, :]
        sampling_locations = reference_points:unsqueeze(3):unsqueeze(5)
            + sampling_offsets / offset_normalizer:view(1, 1, 1, self.n_levels, 1, 2)
    -- elif reference_points.shape[-1] == 4:
    elseif reference_points:size(-1) == 4 then
        -- sampling_locations = reference_points[:, :, None, :, None, :2] \
        --     + sampling_offsets / self.n_points * reference_points[:, :, None, :, None, 2:] * 0.5
        local rp = reference_points:unsqueeze(3):unsqueeze(5)
        sampling_locations = rp:narrow(-1, 1, 2)
            + sampling_offsets / self.n_points * rp:narrow(-1, 3, 2) * 0.5
    else
        error(string.format("Last dim of reference_points must be 2 or 4, but get %d instead.",
            reference_points:size(-1)))
    end
    -- output = MSDeformAttnFunction.apply(value, input_spatial_shapes, input_level_start_index,
    --     sampling_locations, attention_weights, self.im2col_step)
    local output = ms_deform_attn_core_pytorch(value, input_spatial_shapes, sampling_locations,
        attention_weights)
    -- output = self.output_proj(output)
    output = self.output_proj(output)
    return output
end

---------------------------------------------------------------------------------------------
-- models/deformable_transformer.py
---------------------------------------------------------------------------------------------
-- def get_valid_ratio(self, mask):
local function get_valid_ratio(mask)
    -- _, H, W = mask.shape
    local _, H, W = unpack(mask.shape)
    -- valid_H = torch.sum(~mask[:, :, 0], 1)
    local valid_H = tide.sum(mask:select(3, 1):logical_not(), 2)
    -- valid_W = torch.sum(~mask[:, 0, :], 1)
    local valid_W = tide.sum(mask:select(2, 1):logical_not(), 2)
    local valid_ratio_h = valid_H:float() / H
    local valid_ratio_w = valid_W:float() / W
    -- valid_ratio = torch.stack([valid_ratio_w, valid_ratio_h], -1)
    local valid_ratio = tide.stack({ valid_ratio_w, valid_ratio_h }, -1)
    return valid_ratio
end

-- def get_reference_points(spatial_shapes, valid_ratios, device):
local function get_reference_points(spatial_shapes, valid_ratios)
    local reference_points_list = {}
    -- for lvl, (H_, W_) in enumerate(spatial_shapes):
    for lvl, hw in ipairs(spatial_shapes:tolist()) do
        local H_, W_ = hw[1], hw[2]
        -- ref_y, ref_x = torch.meshgrid(torch.linspace(0.5, H_ - 0.5, H_, dtype=torch.float32),
        --                               torch.linspace(0.5, W_ - 0.5, W_, dtype=torch.float32))
        local ref_y, ref_x = unpack(tide.meshgrid(
            tide.linspace(0.5, H_ - 0.5, H_, { dtype = tide.float32 }),
            tide.linspace(0.5, W_ - 0.5, W_, { dtype = tide.float32 }), { indexing = "ij" }))
        -- ref_y = ref_y.reshape(-1)[None] / (valid_ratios[:, None, lvl, 1] * H_)
        ref_y = ref_y:reshape(-1):unsqueeze(1) / (valid_ratios[{ {}, lvl, 2 }]:unsqueeze(2) * H_)
        -- ref_x = ref_x.reshape(-1)[None] / (valid_ratios[:, None, lvl, 0] * W_)
        ref_x = ref_x:reshape(-1):unsqueeze(1) / (valid_ratios[{ {}, lvl, 1 }]:unsqueeze(2) * W_)
        -- ref = torch.stack((ref_x, ref_y), -1)
        local ref = tide.stack({ ref_x, ref_y }, -1)
        reference_points_list[#reference_points_list + 1] = ref
    end
    -- reference_points = torch.cat(reference_points_list, 1)
    local reference_points = tide.cat(reference_points_list, 2)
    -- reference_points = reference_points[:, :, None] * valid_ratios[:, None]
    reference_points = reference_points:unsqueeze(3) * valid_ratios:unsqueeze(2)
    return reference_points
end

---------------------------------------------------------------------------------------------
-- inputs both sides make (float64; the Python reference builds the same)
---------------------------------------------------------------------------------------------
local N, LQ, C, M, L, P = 2, 3, 8, 2, 2, 2

local function sinv(n, a, b)
    return tide.sin(tide.arange(n, { dtype = DT }) * a + b)
end

local function inputs()
    local I = {}
    I.shapes = tide.tensor({ { 4, 4 }, { 2, 2 } }, { dtype = tide.int64 })
    I.starts = tide.tensor({ 0, 16 }, { dtype = tide.int64 })
    I.query = sinv(N * LQ * C, 0.31, 0.2):view(N, LQ, C)
    I.inp = tide.cos(tide.arange(N * 20 * C, { dtype = DT }) * 0.17 + 0.1):view(N, 20, C)
    I.ref = (sinv(N * LQ * L * 2, 0.67, 0.2) * 0.45 + 0.5):view(N, LQ, L, 2)
    I.ref4 = tide.cat({ I.ref, (0.3 + 0.1 * tide.cos(tide.arange(N * LQ * L * 2, { dtype = DT })))
        :view(N, LQ, L, 2) }, -1)
    -- mask0[1, :, 3:] = True; mask1[1, 1:, :] = True (batch 2 padded: the last column of
    -- level 1, the last row of level 2)
    I.mask0 = tide.zeros({ N, 4, 4 }, { dtype = tide.bool })
    I.mask0[{ 2, {}, { 4, 4 } }] = true
    I.mask1 = tide.zeros({ N, 2, 2 }, { dtype = tide.bool })
    I.mask1[{ 2, { 2, 2 }, {} }] = true
    I.pmask = tide.cat({ I.mask0:flatten(2), I.mask1:flatten(2) }, 2)
    return I
end

-- the module with value_proj / output_proj's xavier weights replaced by the formula of their
-- index i (0-based) in named_parameters order: sin(arange(numel) * 0.37 + i) * 0.4, in
-- float64 (the reference's default dtype)
local function make()
    local m = MSDeformAttn(C, L, M, P):to(DT)
    tide.no_grad(function()
        local i = 0
        for n, p in m:named_parameters() do
            if n == "value_proj.weight" or n == "output_proj.weight" then
                p:copy_((tide.sin(tide.arange(p:numel(), { dtype = DT }) * 0.37 + i) * 0.4)
                    :view(p.shape))
            end
            i = i + 1
        end
    end)
    return m
end

describe("Deformable-DETR ms_deform_attn_core_pytorch", function()
    it("the output and the gradients to the value and the sampling offsets", function()
        local I = inputs()
        local value = sinv(N * 20 * M * 4, 0.23, 0.1):view(N, 20, M, 4):requires_grad_()
        local offs = (sinv(N * LQ * M * L * P * 2, 0.41, 0.3) * 0.3):view(N, LQ, M, L, P, 2)
            :requires_grad_()
        local norm = tide.stack({ I.shapes:select(-1, 2), I.shapes:select(-1, 1) }, -1)
        local loc = I.ref:unsqueeze(3):unsqueeze(5) + offs / norm:view(1, 1, 1, L, 1, 2)
        local aw = F.softmax(sinv(N * LQ * M * L * P, 0.53, 0.4):view(N, LQ, M, L * P), -1)
            :view(N, LQ, M, L, P)
        local out = ms_deform_attn_core_pytorch(value, I.shapes, loc, aw)
        assert.are.same({ N, LQ, M * 4 }, out.shape)
        assert_digest(out, { -0.6979605669441, -0.581134682126652, 10.5473604876682 }, "out")
        local loss = (out * sinv(out:numel(), 0.19, 0.7):view(out.shape)):sum()
        loss:backward()
        assert_digest(value.grad, { 6.82597534340255, 0.089886120709218, 16.9133991605341 },
            "value.grad")
        assert_digest(offs.grad, { 12.5685204929745, -8.92431486610219, 41.4454698002564 },
            "offsets.grad")
    end)
end)

describe("Deformable-DETR MSDeformAttn", function()
    it("_reset_parameters' grid_init bias and the parameter order", function()
        local m = make()
        local names = {}
        for n in m:named_parameters() do names[#names + 1] = n end
        assert.are.same({ "sampling_offsets.weight", "sampling_offsets.bias",
            "attention_weights.weight", "attention_weights.bias", "value_proj.weight",
            "value_proj.bias", "output_proj.weight", "output_proj.bias" }, names)
        -- heads at angles 0 and pi: (1, 0) and (-1, ~0), times the point index 1, 2
        assert_digest(m.sampling_offsets.bias,
            { -5.24536659440855e-07, -0.374454284928237, 12.0000005245367 }, "bias")
        assert.has_error(function() MSDeformAttn(6, 2, 4, 2) end,
            "d_model must be divisible by n_heads, but got 6 and 4")
    end)

    it("forward: 2-d and 4-d reference points, with and without a padding mask", function()
        local I = inputs()
        local m = make()
        local out2 = m(I.query, I.ref, I.inp, I.shapes, I.starts)
        assert.are.same({ N, LQ, C }, out2.shape)
        assert_digest(out2, { -0.203338737697015, 0.250425794435297, 3.50552451026048 }, "out2")
        local out2m = m(I.query, I.ref, I.inp, I.shapes, I.starts, I.pmask)
        assert_digest(out2m, { -0.220689878816163, 0.204323924269675, 2.71681996028095 },
            "out2 masked")
        -- batch 1 has no padding: the mask leaves it as it was
        assert.is_true(tide.allclose(out2m[1], out2[1], 0, 1e-12))
        local out4 = m(I.query, I.ref4, I.inp, I.shapes, I.starts)
        assert_digest(out4, { -0.168652868563403, 0.235153890022694, 10.4865120860576 }, "out4")
        assert.has_error(function()
            m(I.query, I.ref4:narrow(-1, 1, 3), I.inp, I.shapes, I.starts)
        end, "Last dim of reference_points must be 2 or 4, but get 3 instead.")
    end)

    it("get_valid_ratio, get_reference_points and the encoder's self-attention", function()
        local I = inputs()
        local vr = tide.stack({ get_valid_ratio(I.mask0), get_valid_ratio(I.mask1) }, 2):to(DT)
        assert.are.same({ { { 1, 1 }, { 1, 1 } }, { { 0.75, 1 }, { 1, 0.5 } } }, vr:tolist())
        local rp = get_reference_points(I.shapes, vr)
        assert.are.same({ N, 20, L, 2 }, rp.shape)
        assert_digest(rp, { 80.1666666666667, -2.03576443537647, 80.1666666666667 }, "rp")
        local enc = make()(I.inp, rp, I.inp, I.shapes, I.starts, I.pmask)
        assert_digest(enc, { -1.19053406276554, -0.354396355477244, 21.2327175349737 }, "enc")
    end)

    it("2 Adam steps on the 4-d, masked forward: gradients and losses as PyTorch's", function()
        local I = inputs()
        local m = make()
        local target = tide.cos(tide.arange(N * LQ * C, { dtype = DT }) * 0.29):view(N, LQ, C)
        local opt = tide.optim.Adam(m:parameters(), { lr = 0.01 })
        local losses = {}
        for s = 1, 3 do
            opt:zero_grad()
            local out = m(I.query, I.ref4, I.inp, I.shapes, I.starts, I.pmask)
            local loss = (out - target):pow(2):mean()
            losses[s] = loss:item()
            if s == 3 then break end
            loss:backward()
            if s == 1 then
                assert_digest(m.sampling_offsets.weight.grad, { -0.0208986762763571,
                    -0.0035562830395826, 0.0751491290244497 }, "sampling_offsets.weight.grad")
                assert_digest(m.value_proj.weight.grad, { 0.0686738897760181,
                    -0.178719095168856, 1.31281090792137 }, "value_proj.weight.grad")
            end
            opt:step()
        end
        ported.assert_close_list({ 0.5510644092702714, 0.4949620837040402, 0.449334816388074 },
            losses, 1e-9, "losses")
    end)
end)
