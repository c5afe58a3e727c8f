-- ported_scripts122_spec.lua — yashbhalgat/HashNeRF-pytorch's hash_encoding.py (HashEmbedder:
-- its nn.Embedding tables with the uniform_ init, trilinear_interp, forward; SHEncoder) and
-- utils.py (hash with the primes, int64 products xored over the dims and masked with
-- (1 << log2_hashmap_size) - 1; get_voxel_vertices with BOX_OFFSETS, the floor of the scaled
-- points, keep_mask), ported line for line at tiny sizes (4 levels of 2 features, tables of 2^6
-- rows, resolutions 2..16, the box [-1, 1]^3, 5 points), then 2 Adam steps of a tiny MLP over the
-- encoding. The Python line stands above each Lua line that differs from it. Dims are 1-based;
-- hash() keeps the source's 0-based table rows (they are hash values) and the embedding lookup
-- adds 1 (tide's Embedding ids are 1-based). Reference values: PyTorch 1.13 on the CPU, the same
-- embeddings (0.1 * sin(0.37 r + 1.1 f + 0.5 level), r and f 0-based) and points.
local tide = require("tide")
local nn = tide.nn
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local function assert_close(want, got, tol, what)
    got = tide.is_tensor(got) and got or tide.tensor(got)
    local w = tide.tensor(want, { dtype = got.dtype })
    assert.are.same(w:size(), got:size(), what)
    local err = (w - got):abs():max():item()
    assert(err <= tol, (what or "") .. ": max error " .. err)
end

local function assert_equal(want, got, what)
    assert.are.same(want, got:tolist(), what)
end

---------------------------------------------------------------------------------------------
-- utils.py
---------------------------------------------------------------------------------------------
-- BOX_OFFSETS = torch.tensor([[[i,j,k] for i in [0, 1] for j in [0, 1] for k in [0, 1]]],
--                            device='cuda')
-- (on the cpu here)
local BOX_OFFSETS
do
    local offs = {}
    for i = 0, 1 do
        for j = 0, 1 do
            for k = 0, 1 do
                offs[#offs + 1] = { i, j, k }
            end
        end
    end
    BOX_OFFSETS = tide.tensor({ offs })
end

-- def hash(coords, log2_hashmap_size):
-- (trace, not in the source, collects each product and xor for the checks)
local function hash(coords, log2_hashmap_size, trace)
    -- primes = [1, 2654435761, 805459861, 3674653429, 2097192037, 1434869437, 2165219737]
    local primes = { 1, 2654435761, 805459861, 3674653429, 2097192037, 1434869437, 2165219737 }
    -- xor_result = torch.zeros_like(coords)[..., 0]
    local xor_result = tide.zeros_like(coords)[{ "...", 1 }]
    -- for i in range(coords.shape[-1]):
    for i = 1, coords.shape[-1] do
        -- xor_result ^= coords[..., i]*primes[i]
        -- (`xor_result = xor_result ~ ...` on Lua 5.3+; bitwise_xor_ on every host)
        local prod = coords[{ "...", i }] * primes[i]
        xor_result:bitwise_xor_(prod)
        if trace then
            trace[#trace + 1] = prod:clone()
            trace[#trace + 1] = xor_result:clone()
        end
    end
    -- return torch.tensor((1<<log2_hashmap_size)-1).to(xor_result.device) & xor_result
    -- (`&` on Lua 5.3+; math.floor keeps 2^n an integer, so the mask is int64)
    return tide.tensor(math.floor(2 ^ log2_hashmap_size) - 1):to(xor_result.device)
        :bitwise_and(xor_result)
end

-- def get_voxel_vertices(xyz, bounding_box, resolution, log2_hashmap_size):
local function get_voxel_vertices(xyz, bounding_box, resolution, log2_hashmap_size)
    -- box_min, box_max = bounding_box
    local box_min, box_max = bounding_box[1], bounding_box[2]

    -- keep_mask = xyz==torch.max(torch.min(xyz, box_max), box_min)
    local keep_mask = xyz:eq(tide.max(tide.min(xyz, box_max), box_min))
    -- if not torch.all(xyz <= box_max) or not torch.all(xyz >= box_min):
    if not tide.all(xyz:le(box_max)):item() or not tide.all(xyz:ge(box_min)):item() then
        -- xyz = torch.clamp(xyz, min=box_min, max=box_max)
        xyz = tide.clamp(xyz, { min = box_min, max = box_max })
    end

    local grid_size = (box_max - box_min) / resolution

    -- bottom_left_idx = torch.floor((xyz-box_min)/grid_size).int()
    local bottom_left_idx = tide.floor((xyz - box_min) / grid_size):int()
    local voxel_min_vertex = bottom_left_idx * grid_size + box_min
    -- voxel_max_vertex = voxel_min_vertex + torch.tensor([1.0,1.0,1.0])*grid_size
    local voxel_max_vertex = voxel_min_vertex + tide.tensor({ 1.0, 1.0, 1.0 }) * grid_size

    -- voxel_indices = bottom_left_idx.unsqueeze(1) + BOX_OFFSETS
    local voxel_indices = bottom_left_idx:unsqueeze(2) + BOX_OFFSETS
    local hashed_voxel_indices = hash(voxel_indices, log2_hashmap_size)

    return voxel_min_vertex, voxel_max_vertex, hashed_voxel_indices, keep_mask
end

---------------------------------------------------------------------------------------------
-- hash_encoding.py
---------------------------------------------------------------------------------------------
-- class HashEmbedder(nn.Module):
local HashEmbedder = nn.Module:extend("HashEmbedder")
-- def __init__(self, bounding_box, n_levels=16, n_features_per_level=2,\
--             log2_hashmap_size=19, base_resolution=16, finest_resolution=512):
function HashEmbedder:init(bounding_box, n_levels, n_features_per_level, log2_hashmap_size,
                           base_resolution, finest_resolution)
    self.bounding_box = bounding_box
    self.n_levels = n_levels or 16
    self.n_features_per_level = n_features_per_level or 2
    self.log2_hashmap_size = log2_hashmap_size or 19
    -- self.base_resolution = torch.tensor(base_resolution)
    self.base_resolution = tide.tensor(base_resolution or 16)
    self.finest_resolution = tide.tensor(finest_resolution or 512)
    self.out_dim = self.n_levels * self.n_features_per_level

    -- self.b = torch.exp((torch.log(self.finest_resolution)-torch.log(self.base_resolution))
    --                    /(n_levels-1))
    self.b = tide.exp((tide.log(self.finest_resolution) - tide.log(self.base_resolution))
        / (self.n_levels - 1))

    -- self.embeddings = nn.ModuleList([nn.Embedding(2**self.log2_hashmap_size, \
    --                                 self.n_features_per_level) for i in range(n_levels)])
    local embeddings = {}
    for _ = 1, self.n_levels do
        embeddings[#embeddings + 1] = nn.Embedding(math.floor(2 ^ self.log2_hashmap_size),
            self.n_features_per_level)
    end
    self.embeddings = nn.ModuleList(embeddings)
    -- custom uniform initialization
    -- for i in range(n_levels):
    for i = 1, self.n_levels do
        -- nn.init.uniform_(self.embeddings[i].weight, a=-0.0001, b=0.0001)
        nn.init.uniform_(self.embeddings[i].weight, -0.0001, 0.0001)
    end
end

-- def trilinear_interp(self, x, voxel_min_vertex, voxel_max_vertex, voxel_embedds):
function HashEmbedder:trilinear_interp(x, voxel_min_vertex, voxel_max_vertex, voxel_embedds)
    -- weights = (x - voxel_min_vertex)/(voxel_max_vertex-voxel_min_vertex) # B x 3
    local weights = (x - voxel_min_vertex) / (voxel_max_vertex - voxel_min_vertex)
    if self.w then self.w[#self.w + 1] = weights end -- (not in the source: for the checks)
    -- voxel_embedds[:,k] is E(k + 1); weights[:,d][:,None] is W(d + 1)
    local function E(k) return voxel_embedds[{ {}, k }] end
    local function W(d) return weights[{ {}, d, tide.newaxis }] end

    -- step 1
    -- 0->000, 1->001, 2->010, 3->011, 4->100, 5->101, 6->110, 7->111
    -- c00 = voxel_embedds[:,0]*(1-weights[:,0][:,None]) + voxel_embedds[:,4]*weights[:,0][:,None]
    local c00 = E(1) * (1 - W(1)) + E(5) * W(1)
    -- c01 = voxel_embedds[:,1]*(1-weights[:,0][:,None]) + voxel_embedds[:,5]*weights[:,0][:,None]
    local c01 = E(2) * (1 - W(1)) + E(6) * W(1)
    -- c10 = voxel_embedds[:,2]*(1-weights[:,0][:,None]) + voxel_embedds[:,6]*weights[:,0][:,None]
    local c10 = E(3) * (1 - W(1)) + E(7) * W(1)
    -- c11 = voxel_embedds[:,3]*(1-weights[:,0][:,None]) + voxel_embedds[:,7]*weights[:,0][:,None]
    local c11 = E(4) * (1 - W(1)) + E(8) * W(1)

    -- step 2
    -- c0 = c00*(1-weights[:,1][:,None]) + c10*weights[:,1][:,None]
    local c0 = c00 * (1 - W(2)) + c10 * W(2)
    -- c1 = c01*(1-weights[:,1][:,None]) + c11*weights[:,1][:,None]
    local c1 = c01 * (1 - W(2)) + c11 * W(2)

    -- step 3
    -- c = c0*(1-weights[:,2][:,None]) + c1*weights[:,2][:,None]
    local c = c0 * (1 - W(3)) + c1 * W(3)

    return c
end

-- def forward(self, x):
function HashEmbedder:forward(x)
    -- x is 3D point position: B x 3
    local x_embedded_all = {}
    local keep_mask
    -- for i in range(self.n_levels):
    for i = 1, self.n_levels do
        -- resolution = torch.floor(self.base_resolution * self.b**i)
        local resolution = tide.floor(self.base_resolution * self.b ^ (i - 1))
        local voxel_min_vertex, voxel_max_vertex, hashed_voxel_indices
        voxel_min_vertex, voxel_max_vertex, hashed_voxel_indices, keep_mask = get_voxel_vertices(
            x, self.bounding_box, resolution, self.log2_hashmap_size)
        if self.trace then -- (not in the source: for the checks)
            self.trace[i] = { resolution, voxel_min_vertex, voxel_max_vertex,
                hashed_voxel_indices, keep_mask }
        end

        -- voxel_embedds = self.embeddings[i](hashed_voxel_indices)
        -- (the hash is a 0-based row; tide's Embedding ids are 1-based)
        local voxel_embedds = self.embeddings[i](hashed_voxel_indices + 1)

        local x_embedded = self:trilinear_interp(x, voxel_min_vertex, voxel_max_vertex,
            voxel_embedds)
        x_embedded_all[#x_embedded_all + 1] = x_embedded
    end

    -- keep_mask = keep_mask.sum(dim=-1)==keep_mask.shape[-1]
    keep_mask = keep_mask:sum(-1):eq(keep_mask.shape[-1])
    -- return torch.cat(x_embedded_all, dim=-1), keep_mask
    return tide.cat(x_embedded_all, -1), keep_mask
end

-- class SHEncoder(nn.Module):
local SHEncoder = nn.Module:extend("SHEncoder")
-- def __init__(self, input_dim=3, degree=4):
function SHEncoder:init(input_dim, degree)
    self.input_dim = input_dim or 3
    self.degree = degree or 4

    assert(self.input_dim == 3)
    assert(self.degree >= 1 and self.degree <= 5)

    -- self.out_dim = degree ** 2
    self.out_dim = self.degree * self.degree

    self.C0 = 0.28209479177387814
    self.C1 = 0.4886025119029199
    self.C2 = { 1.0925484305920792, -1.0925484305920792, 0.31539156525252005,
        -1.0925484305920792, 0.5462742152960396 }
    self.C3 = { -0.5900435899266435, 2.890611442640554, -0.4570457994644658, 0.3731763325901154,
        -0.4570457994644658, 1.445305721320277, -0.5900435899266435 }
    self.C4 = { 2.5033429417967046, -1.7701307697799304, 0.9461746957575601, -0.6690465435572892,
        0.10578554691520431, -0.6690465435572892, 0.47308734787878004, -1.7701307697799304,
        0.6258357354491761 }
end

-- def forward(self, input, **kwargs):
-- (result[..., k] is R[k + 1]; self.Cn[k] is self.Cn[k + 1])
function SHEncoder:forward(input)
    -- result = torch.empty((*input.shape[:-1], self.out_dim), dtype=input.dtype,
    --                      device=input.device)
    local shape = input:size()
    shape[#shape] = self.out_dim
    local result = tide.empty(shape, { dtype = input.dtype, device = input.device })
    local R = setmetatable({}, { __newindex = function(_, k, v) result[{ "...", k }] = v end })
    -- x, y, z = input.unbind(-1)
    local x, y, z = unpack(input:unbind(-1))
    local C2, C3, C4 = self.C2, self.C3, self.C4

    R[1] = self.C0
    if self.degree > 1 then
        R[2] = -self.C1 * y
        R[3] = self.C1 * z
        R[4] = -self.C1 * x
        if self.degree > 2 then
            local xx, yy, zz = x * x, y * y, z * z
            local xy, yz, xz = x * y, y * z, x * z
            R[5] = C2[1] * xy
            R[6] = C2[2] * yz
            R[7] = C2[3] * (2.0 * zz - xx - yy)
            R[8] = C2[4] * xz
            R[9] = C2[5] * (xx - yy)
            if self.degree > 3 then
                R[10] = C3[1] * y * (3 * xx - yy)
                R[11] = C3[2] * xy * z
                R[12] = C3[3] * y * (4 * zz - xx - yy)
                R[13] = C3[4] * z * (2 * zz - 3 * xx - 3 * yy)
                R[14] = C3[5] * x * (4 * zz - xx - yy)
                R[15] = C3[6] * z * (xx - yy)
                R[16] = C3[7] * x * (xx - 3 * yy)
                if self.degree > 4 then
                    R[17] = C4[1] * xy * (xx - yy)
                    R[18] = C4[2] * yz * (3 * xx - yy)
                    R[19] = C4[3] * xy * (7 * zz - 1)
                    R[20] = C4[4] * yz * (7 * zz - 3)
                    R[21] = C4[5] * (zz * (35 * zz - 30) + 3)
                    R[22] = C4[6] * xz * (7 * zz - 3)
                    R[23] = C4[7] * (xx - yy) * (7 * zz - 1)
                    R[24] = C4[8] * xz * (xx - 3 * yy)
                    R[25] = C4[9] * (xx * (xx - 3 * yy) - yy * (3 * xx - yy))
                end
            end
        end
    end

    return result
end

local REF = {
    L0 = { res = 2, vmin = { { 0, -1, 0 }, { -1, 0, -1 }, { 1, 0, -1 }, { 0, 0, -1 }, { -1, -1,
        0 } },
        vmax = { { 1, 0, 1 }, { 0, 1, 0 }, { 2, 1, 0 }, { 1, 1, 0 }, { 0, 0, 1 } },
        hashed = { { 21, 44, 38, 27, 24, 41, 39, 26 }, { 50, 37, 35, 56, 49, 38, 36, 55 }, { 52,
            39, 33, 54, 51, 40, 34, 53 }, { 49, 38, 36, 55, 52, 39, 33, 54 }, { 22, 43, 37, 28,
            21, 44, 38, 27 } },
        weights = { { 0.300000012, 0.449999988, 0.810000002 }, { 0.0799999833, 0.140000001,
            0.669999957 }, { 0.200000048, 0.5, 0.899999976 }, { 0, 0.999000013, 0 },
            { 0.389999986, 0.730000019, 0.449999988 } },
        keep3 = { { true, true, true }, { true, true, true }, { false, true, true }, { true, true,
            true }, { true, true, true } } },
    L1 = { res = 4, vmin = { { 0, -1, 0.5 }, { -1, 0, -0.5 }, { 1, 0.5, -0.5 }, { 0, 0.5, -1 },
        { -1, -0.5, 0 } },
        vmax = { { 0.5, -0.5, 1 }, { -0.5, 0.5, 0 }, { 1.5, 1, 0 }, { 0.5, 1, -0.5 }, { -0.5, 0,
            0.5 } },
        hashed = { { 62, 23, 13, 40, 61, 24, 14, 39 }, { 56, 9, 7, 58, 55, 10, 8, 57 }, { 3, 62,
            22, 43, 4, 61, 21, 44 }, { 18, 5, 7, 20, 17, 6, 8, 19 }, { 28, 15, 9, 30, 27, 16, 10,
            29 } },
        weights = { { 0.600000024, 0.899999976, 0.620000005 }, { 0.159999967, 0.280000001,
            0.339999974 }, { 0.400000095, 0, 0.800000012 }, { 0, 0.998000026, 0 }, { 0.779999971,
            0.459999979, 0.899999976 } },
        keep3 = { { true, true, true }, { true, true, true }, { false, true, true }, { true, true,
            true }, { true, true, true } } },
    L2 = { res = 8, vmin = { { 0.25, -0.75, 0.75 }, { -1, 0, -0.5 }, { 1, 0.5, -0.25 }, { 0, 0.75,
        -1 }, { -0.75, -0.5, 0.25 } },
        vmax = { { 0.5, -0.5, 1 }, { -0.75, 0.25, -0.25 }, { 1.25, 0.75, 0 }, { 0.25, 1, -0.75 },
            { -0.5, -0.25, 0.5 } },
        hashed = { { 40, 29, 53, 16, 37, 32, 56, 13 }, { 47, 60, 32, 11, 48, 59, 31, 12 }, { 18,
            59, 33, 12, 17, 60, 34, 11 }, { 20, 7, 13, 26, 19, 8, 14, 25 }, { 11, 30, 60, 45, 10,
            31, 57, 48 } },
        weights = { { 0.200000048, 0.799999952, 0.24000001 }, { 0.319999933, 0.560000002,
            0.679999948 }, { 0.800000191, 0, 0.600000024 }, { 0, 0.996000051, 0 }, { 0.559999943,
            0.919999957, 0.799999952 } },
        keep3 = { { true, true, true }, { true, true, true }, { false, true, true }, { true, true,
            true }, { true, true, true } } },
    L3 = { res = 16, vmin = { { 0.25, -0.625, 0.75 }, { -1, 0.125, -0.375 }, { 1, 0.5, -0.125 },
        { 0, 0.875, -1 }, { -0.625, -0.375, 0.375 } },
        vmax = { { 0.375, -0.5, 0.875 }, { -0.875, 0.25, -0.25 }, { 1.125, 0.625, 0 }, { 0.125, 1,
            -0.875 }, { -0.5, -0.25, 0.5 } },
        hashed = { { 64, 35, 41, 54, 63, 36, 42, 53 }, { 17, 8, 4, 21, 18, 7, 3, 22 }, { 16, 53,
            63, 6, 15, 54, 64, 5 }, { 24, 3, 25, 14, 23, 4, 26, 13 }, { 18, 11, 3, 26, 23, 14, 6,
            31 } },
        weights = { { 0.400000095, 0.599999905, 0.480000019 }, { 0.639999866, 0.120000005,
            0.359999895 }, { 1.60000038, 0, 0.199999988 }, { 0, 0.992000103, 0 }, { 0.119999886,
            0.839999914, 0.599999905 } },
        keep3 = { { true, true, true }, { true, true, true }, { false, true, true }, { true, true,
            true }, { true, true, true } } },
    keep = { true, true, false, true, true },
    enc = { { 0.0182414334, -0.0545489155, 0.0163332671, -0.0127442386, 0.058952231, 0.0324694738,
        0.0131193027, -0.0125441533 }, { 0.030694101, 0.0735053867, 0.045641724, -0.0374092646,
        -0.0695798323, -0.0230412036, 0.0404781699, -0.00151843205 }, { 0.0694816709,
        0.0702388436, -0.0437955037, -0.0585259348, -0.0153389368, -0.0183473453, 0.0294601023,
        0.0729832053 }, { 0.037302766, 0.0995217562, 0.0409366526, -0.0624300167, -0.0739840195,
        0.0254147053, -0.0814329535, -0.088581048 }, { 0.0321798697, 0.00255708396, -0.0620131828,
        0.00386234373, -0.059164837, -0.00332050584, -0.0224376321, -0.0300570298 } },
    hashbig = { 2, 43 },
    trace = { { 123456789012, -7 }, { 123456789012, -7 }, { 2227290961951656106, 7963307283 },
        { 2227290913389417150, -7963307286 }, { 44747322577855, 168767338282221568 },
        { 2227247695218360577, -168767346245528854 } },
    losses = { 0.0520759821, 0.023452552 },
    rows0 = { [21] = { 0.18848145, 0.174494252 }, [22] = { 0.192099363, 0.143637329 },
        [24] = { 0.178348586, 0.0796544999 }, [26] = { 0.116497755, 0.0181974173 },
        [27] = { 0.0800906643, -0.000759340823 }, [28] = { 0.0388917997, -0.00859241933 },
        [33] = { 0.0332243629, 0.135104209 }, [34] = { 0.0647482499, 0.166297272 },
        [35] = { -0.0933348611, -0.00628697127 }, [36] = { 0.0567040592, 0.12258137 },
        [37] = { 0.0969103277, 0.128444865 }, [38] = { 0.181677818, 0.168256104 },
        [39] = { 0.199329197, 0.150680691 }, [40] = { 0.195384264, 0.116307601 },
        [41] = { 0.1779342, 0.0789870992 }, [43] = { 0.109169155, 0.0106781982 },
        [44] = { 0.0799462646, 0.000648446381 }, [49] = { -0.18298164, -0.0946336389 },
        [50] = { -0.160605744, -0.0588869266 }, [51] = { 0.0653877035, 0.166797265 },
        [52] = { 0.101684779, 0.188633919 }, [53] = { 0.137701184, 0.19828248 },
        [54] = { 0.168566182, 0.194439963 }, [55] = { -0.0042209439, -0.0169818029 },
        [56] = { 0.00505306199, -0.0445072651 } },
    rows1 = { [3] = { 0.187693506, 0.160555169 }, [4] = { 0.193038091, 0.130540341 },
        [7] = { 0.0633437932, -0.0379106998 }, [8] = { -0.0925847739, -0.184488744 },
        [9] = { -0.127534732, -0.195160851 }, [10] = { 0.00329057686, -0.0305725988 },
        [13] = { -0.00385898352, 0.0670501962 }, [14] = { 0.0108937658, 0.103777356 },
        [15] = { 0.032574039, 0.136886463 }, [16] = { 0.0661933944, 0.165451124 },
        [18] = { 0.0784213617, 0.135058746 }, [23] = { 0.164226636, 0.0601251349 },
        [24] = { 0.133859321, 0.0278441384 }, [27] = { 0.0252446756, -0.00826924667 },
        [28] = { 0.0018081218, 0.00637294725 }, [29] = { -0.00978127494, 0.0322351828 },
        [30] = { -0.0079639852, 0.0658060983 }, [39] = { 0.184755102, 0.0959243774 },
        [40] = { 0.163744986, 0.059479896 }, [55] = { 0.00207730755, -0.057863269 },
        [56] = { -0.00683522224, -0.0937178284 }, [57] = { -0.0280410834, -0.130115792 },
        [58] = { -0.0586973689, -0.162163556 }, [61] = { 0.0280400515, -0.00834138319 },
        [62] = { 0.00498337671, 0.0066922009 } },
    rows2 = { [10] = { -0.00679996982, 0.00777004659 }, [11] = { -0.200002819, -0.124295361 },
        [12] = { -0.193418577, -0.0898513123 }, [13] = { 0.025390923, 0.11871016 },
        [16] = { 0.107172661, 0.17250365 }, [17] = { 0.131463647, 0.154557556 },
        [18] = { 0.156512886, 0.141907066 }, [20] = { 0.197532788, 0.119008988 },
        [29] = { -0.0126271974, 0.0639587939 }, [30] = { 0.0117616653, 0.109184466 },
        [31] = { 0.0252434909, 0.14440982 }, [32] = { -0.108076409, 0.147046372 },
        [37] = { 0.179138556, 0.102975309 }, [40] = { 0.108246274, 0.00132333115 },
        [45] = { -0.0140143298, 0.0378844105 }, [47] = { -0.173507318, -0.0518385321 },
        [48] = { 0.0409761183, 0.142988801 }, [53] = { 0.179184884, 0.135187149 },
        [56] = { 0.140618145, 0.0302848294 }, [57] = { 0.112768821, 0.00941611081 },
        [59] = { 0.0215502772, -0.0449609645 }, [60] = { -0.00338681042, -0.0367666669 } },
    rows3 = { [3] = { -0.0129943453, -0.108780272 }, [4] = { 0.143347561, 0.0409863405 },
        [6] = { -0.116019741, -0.188879505 }, [7] = { 0.0380030274, -0.0045995228 },
        [8] = { 0.0114214495, 0.00601165742 }, [11] = { -0.183677346, -0.0906217098 },
        [14] = { -0.0926373228, -0.00199301541 }, [15] = { 0.0620701313, 0.00460255891 },
        [16] = { 0.0459627658, 0.190774322 }, [17] = { 0.183402002, 0.173450813 },
        [18] = { 0.188514516, 0.14042002 }, [21] = { 0.142745286, 0.0404072888 },
        [22] = { 0.108072914, 0.0137526952 }, [23] = { -0.116667174, -0.189046681 },
        [24] = { -0.0704480112, -0.117392167 }, [25] = { -0.0969341472, -0.106570184 },
        [26] = { -0.19233337, -0.157968938 }, [31] = { -0.0919687003, -0.00170727447 },
        [35] = { 0.145120025, 0.0632000118 }, [36] = { 0.14042969, 0.0285017267 },
        [41] = { -0.0105215851, -0.0864036828 }, [42] = { -0.036752373, -0.075344339 },
        [53] = { 0.189563811, 0.114180535 }, [54] = { 0.105712727, -0.115412608 },
        [63] = { -0.018581653, 0.0523923747 }, [64] = { 0.0135666244, 0.0829632729 } },
    dirs = { { 0.30058673, -0.500977874, 0.811584115 }, { -0.909137309, 0.101015262,
        -0.404061049 }, { 0.21199958, 0.741998494, -0.635998726 }, { 0, 0, 1 }, { -0.717137218,
        -0.358568609, 0.597614288 } },
    sh5 = { { 0.282094806, 0.24477905, 0.396542042, -0.146867439, -0.164523929, 0.444214582,
        0.307824165, -0.266528755, -0.0877460912, 0.00593512179, -0.353273958, 0.525106609,
        0.0888433009, -0.315063953, -0.188412741, 0.117515445, 0.0605516173, 0.014450551,
        -0.514456749, 0.43814525, -0.166665643, -0.26288715, -0.274376899, 0.286120981,
        -0.0406200401 }, { 0.282094806, -0.0493563116, -0.197425246, 0.444206774, -0.100336097,
        0.0445938222, -0.160914063, -0.401344389, 0.44593817, -0.147183925, 0.107263796,
        0.00847994257, 0.329267442, -0.0763194859, -0.476727992, 0.426955044, -0.187672541,
        0.178413883, -0.0124133863, -0.0507149026, -0.102084637, 0.456434071, 0.0551706031,
        -0.517547667, 0.395936877 }, { 0.282094806, -0.362542331, -0.310750574, -0.10358353,
        0.171861559, 0.515584648, 0.0673307851, 0.147309899, -0.276206076, 0.1820115,
        -0.289190441, -0.346748143, 0.232006207, -0.0990708992, 0.464770406, 0.20098567,
        -0.199104398, -0.347277254, 0.272588134, -0.0532128736, -0.360546947, -0.015203679,
        -0.438088059, -0.383479893, 0.0980510116 }, { 0.282094806, -0, 0.488602519, -0, 0, -0,
        0.630783141, -0, 0, -0, 0, -0, 0.746352673, -0, 0, -0, 0, -0, 0, -0, 0.846284389, -0, 0,
        -0, 0 }, { 0.282094806, 0.175197527, 0.291995853, 0.350395054, 0.280941099, 0.234117553,
        0.0225279201, 0.468235105, 0.210705817, 0.299222052, 0.444206834, 0.128764614,
        -0.270804644, 0.257529229, 0.333155096, 0.0544040091, 0.248290837, 0.536458135,
        0.364953101, -0.0716836005, -0.343802989, -0.143367201, 0.27371484, 0.0975378454,
        -0.0724181458 } },
}

---------------------------------------------------------------------------------------------
-- checks against PyTorch 1.13 (/tmp script: the source's functions, the same data)
---------------------------------------------------------------------------------------------
local function points()
    return tide.tensor({ { 0.3, -0.55, 0.81 }, { -0.92, 0.14, -0.33 }, { 1.2, 0.5, -0.1 },
        { 0.0, 0.999, -1.0 }, { -0.61, -0.27, 0.45 } })
end

-- the tiny HashEmbedder, its tables set to 0.1 * sin(0.37 r + 1.1 f + 0.5 level) after the
-- source's uniform_ init (r, f, level 0-based, as the reference script's)
local function embedder()
    local bbox = { tide.tensor({ -1.0, -1.0, -1.0 }), tide.tensor({ 1.0, 1.0, 1.0 }) }
    local emb = HashEmbedder(bbox, 4, 2, 6, 2, 16)
    local init = {}
    tide.no_grad(function()
        for i = 1, 4 do
            local w = emb.embeddings[i].weight
            assert(w:abs():max():item() <= 0.0001) -- the source's uniform_ init
            local r = tide.arange(0, 64):float():unsqueeze(2)
            local f = tide.arange(0, 2):float():unsqueeze(1)
            w:copy_(0.1 * tide.sin(0.37 * r + 1.1 * f + 0.5 * (i - 1)))
            init[i] = w:clone()
        end
    end)
    return emb, init
end

-- coordinates whose products by the primes pass 2^63 (the second row's 2^40 * 805459861)
local BIG = { { 123456789012, 987654321098, 55555 }, { -7, 3, 1099511627776 } }

describe("yashbhalgat/HashNeRF-pytorch hash_encoding.py and utils.py", function()
    it("hash: int64 products wrap and xor; the masked rows match PyTorch's", function()
        local h = hash(tide.tensor(BIG), 6)
        assert.are.equal("int64", h.dtype)
        -- 0-based rows, as the source's (REF holds them + 1)
        assert_equal(REF.hashbig, h + 1)
    end)

    it("HashEmbedder forward: resolutions, vertices, hashed rows, weights, encoding", function()
        local emb = embedder()
        assert.are.equal("float32", emb.b.dtype)
        assert.are.equal(2, emb.b:item()) -- exp(log(8) / 3) in float32, as PyTorch's
        emb.trace, emb.w = {}, {}
        local enc, keep = emb(points())
        for i = 1, 4 do
            local ref, tr = REF["L" .. (i - 1)], emb.trace[i]
            assert.are.equal(ref.res, tr[1]:item(), "resolution " .. i)
            assert_close(ref.vmin, tr[2], 0, "voxel_min_vertex " .. i)
            assert_close(ref.vmax, tr[3], 0, "voxel_max_vertex " .. i)
            assert.are.equal("int64", tr[4].dtype)
            assert.are.same({ 5, 8 }, tr[4]:size())
            -- the hashed rows exactly, 1-based (the source's + 1, as the lookup takes them)
            assert_equal(ref.hashed, tr[4] + 1)
            assert_equal(ref.keep3, tr[5])
            assert_close(ref.weights, emb.w[i], 1e-6, "weights " .. i)
        end
        assert_equal(REF.keep, keep)
        assert.are.same({ 5, 8 }, enc:size())
        assert_close(REF.enc, enc, 1e-6, "encoding")
    end)

    it("2 Adam steps of an MLP over the encoding: losses and embedding rows", function()
        local emb, init = embedder()
        -- mlp = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 1))
        local mlp = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 1))
        tide.no_grad(function()
            for k, lin in ipairs({ mlp[1], mlp[3] }) do
                local o, i_ = lin.weight:size(1), lin.weight:size(2)
                lin.weight:copy_(0.5 * tide.cos(0.7 * tide.arange(0, o):float():unsqueeze(2)
                    + 0.4 * tide.arange(0, i_):float():unsqueeze(1) + (k - 1)))
                lin.bias:copy_(0.05 * tide.arange(0, o):float() - 0.02)
            end
        end)
        local target = tide.tensor({ { 0.2 }, { -0.1 }, { 0.3 }, { 0.0 }, { 0.15 } })
        local params = emb:parameters()
        for _, p in ipairs(mlp:parameters()) do params[#params + 1] = p end
        local opt = tide.optim.Adam(params, { lr = 0.05 })
        local x, losses = points(), {}
        for _ = 1, 2 do
            opt:zero_grad()
            local enc = emb(x)
            -- loss = ((mlp(enc) - target)**2).mean()
            local loss = ((mlp(enc) - target) ^ 2):mean()
            loss:backward()
            opt:step()
            assert_finite(loss)
            losses[#losses + 1] = loss:item()
        end
        assert_close(REF.losses, losses, 1e-6, "losses")
        assert(losses[2] < losses[1])
        for i = 1, 4 do
            local w, rows, n = emb.embeddings[i].weight, REF["rows" .. (i - 1)], 0
            for r = 1, 64 do
                if rows[r] then
                    n = n + 1
                    assert_close(rows[r], w[r], 1e-5, "table " .. i .. " row " .. r)
                else -- rows no point reached keep their values (Adam's zero gradient)
                    assert_equal(init[i][r]:tolist(), w[r])
                end
            end
            assert(n > 8, "table " .. i .. " moved " .. n .. " rows")
        end
    end)

    it("SHEncoder degrees 4 and 5 match PyTorch's", function()
        local d = tide.tensor(REF.dirs)
        local sh5 = SHEncoder(3, 5)
        assert.are.equal(25, sh5.out_dim)
        assert_close(REF.sh5, sh5(d), 1e-6, "degree 5")
        local sh4 = SHEncoder()(d)
        assert.are.same({ 5, 16 }, sh4:size())
        assert_close(REF.sh5, tide.cat({ sh4, sh5(d)[{ {}, { 17, 25 } }] }, 2), 1e-6, "degree 4")
    end)
end)

describe("HashNeRF hash: every int64 intermediate exact (Lua 5.3+ integers) #lua53", function()
    it("products and xors as PyTorch's, wrapped past 2^63", function()
        local trace = {}
        hash(tide.tensor(BIG), 6, trace)
        for k, want in ipairs(REF.trace) do
            assert_equal(want, trace[k])
        end
    end)
end)
