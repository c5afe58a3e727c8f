-- ported_scripts61_spec.lua — yenchenlin/nerf-pytorch's run_nerf_helpers.py (img2mse, mse2psnr,
-- to8b, Embedder / get_embedder, the NeRF MLP with skips and use_viewdirs, get_rays, get_rays_np,
-- ndc_rays, sample_pdf) and run_nerf.py (batchify, run_network, batchify_rays, render,
-- create_nerf, raw2outputs, render_rays, and train()'s optimisation step), ported line for line
-- at tiny sizes (H = W = 4, focal 5, N_samples 8, N_importance 8, netdepth 2, netwidth 16, three
-- rays) on fixed and random data. The Python line stands above each Lua line that differs
-- from it.
-- Dims and indices are 1-based; NeRF's skips stay 0-based (they name layers, as enumerate's i).
-- load_weights_from_keras (Keras weights) and the checkpoint loading of create_nerf are left out.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- Python's `x in list`
local function contains(list, x)
    for _, v in ipairs(list) do
        if v == x then return true end
    end
    return false
end

---------------------------------------------------------------------------------------------
-- 1. run_nerf_helpers.py
---------------------------------------------------------------------------------------------
-- Misc
-- img2mse = lambda x, y : torch.mean((x - y) ** 2)
local img2mse = function(x, y) return tide.mean((x - y) ^ 2) end
-- mse2psnr = lambda x : -10. * torch.log(x) / torch.log(torch.Tensor([10.]))
local mse2psnr = function(x) return -10. * tide.log(x) / tide.log(tide.Tensor({ 10. })) end
-- to8b = lambda x : (255*np.clip(x,0,1)).astype(np.uint8)
-- GAP: tide has no NumPy; the image stays a tide tensor and uint8 is its dtype
local to8b = function(x) return (255 * tide.clip(x, 0, 1)):to("uint8") end

-- Positional encoding (section 5.1)
-- class Embedder:
local Embedder = ported.class("Embedder")
-- def __init__(self, **kwargs):
function Embedder:__init__(kwargs)
    self.kwargs = kwargs
    self:create_embedding_fn()
end

function Embedder:create_embedding_fn()
    local embed_fns = {}
    local d = self.kwargs['input_dims']
    local out_dim = 0
    if self.kwargs['include_input'] then
        -- embed_fns.append(lambda x : x)
        embed_fns[#embed_fns + 1] = function(x) return x end
        out_dim = out_dim + d
    end

    local max_freq = self.kwargs['max_freq_log2']
    local N_freqs = self.kwargs['num_freqs']

    local freq_bands
    if self.kwargs['log_sampling'] then
        -- freq_bands = 2.**torch.linspace(0., max_freq, steps=N_freqs)
        freq_bands = 2. ^ tide.linspace(0., max_freq, { steps = N_freqs })
    else
        -- freq_bands = torch.linspace(2.**0., 2.**max_freq, steps=N_freqs)
        freq_bands = tide.linspace(2. ^ 0., 2. ^ max_freq, { steps = N_freqs })
    end

    -- for freq in freq_bands:
    for k = 1, #freq_bands do
        local freq = freq_bands[k]
        -- for p_fn in self.kwargs['periodic_fns']:
        for _, p_fn in ipairs(self.kwargs['periodic_fns']) do
            -- embed_fns.append(lambda x, p_fn=p_fn, freq=freq : p_fn(x * freq))
            embed_fns[#embed_fns + 1] = function(x) return p_fn(x * freq) end
            out_dim = out_dim + d
        end
    end

    self.embed_fns = embed_fns
    self.out_dim = out_dim
end

function Embedder:embed(inputs)
    -- return torch.cat([fn(inputs) for fn in self.embed_fns], -1)
    local parts = {}
    for k, fn in ipairs(self.embed_fns) do
        parts[k] = fn(inputs)
    end
    return tide.cat(parts, -1)
end

-- def get_embedder(multires, i=0):
local function get_embedder(multires, i)
    i = i or 0
    if i == -1 then
        return nn.Identity(), 3
    end

    local embed_kwargs = {
        ['include_input'] = true,
        ['input_dims'] = 3,
        ['max_freq_log2'] = multires - 1,
        ['num_freqs'] = multires,
        ['log_sampling'] = true,
        ['periodic_fns'] = { tide.sin, tide.cos },
    }

    -- embedder_obj = Embedder(**embed_kwargs)
    local embedder_obj = Embedder(embed_kwargs)
    -- embed = lambda x, eo=embedder_obj : eo.embed(x)
    local embed = function(x) return embedder_obj:embed(x) end
    return embed, embedder_obj.out_dim
end

-- Model
-- class NeRF(nn.Module):
local NeRF = nn.Module:extend("NeRF")
nn.signature(NeRF, "D=8, W=256, input_ch=3, input_ch_views=3, output_ch=4, skips=[4], " ..
    "use_viewdirs=False")
function NeRF:init(D, W, input_ch, input_ch_views, output_ch, skips, use_viewdirs)
    self.D = D
    self.W = W
    self.input_ch = input_ch
    self.input_ch_views = input_ch_views
    self.skips = skips
    self.use_viewdirs = use_viewdirs

    -- self.pts_linears = nn.ModuleList(
    --     [nn.Linear(input_ch, W)] + [nn.Linear(W, W) if i not in self.skips else
    --      nn.Linear(W + input_ch, W) for i in range(D-1)])
    local pts = { nn.Linear(input_ch, W) }
    for i = 0, D - 2 do
        pts[#pts + 1] = not contains(skips, i) and nn.Linear(W, W)
            or nn.Linear(W + input_ch, W)
    end
    self.pts_linears = nn.ModuleList(pts)

    -- Implementation according to the official code release
    -- self.views_linears = nn.ModuleList([nn.Linear(input_ch_views + W, W//2)])
    self.views_linears = nn.ModuleList({ nn.Linear(input_ch_views + W, math.floor(W / 2)) })

    if use_viewdirs then
        self.feature_linear = nn.Linear(W, W)
        self.alpha_linear = nn.Linear(W, 1)
        -- self.rgb_linear = nn.Linear(W//2, 3)
        self.rgb_linear = nn.Linear(math.floor(W / 2), 3)
    else
        self.output_linear = nn.Linear(W, output_ch)
    end
end

function NeRF:forward(x)
    -- input_pts, input_views = torch.split(x, [self.input_ch, self.input_ch_views], dim=-1)
    local input_pts, input_views = unpack(tide.split(x, { self.input_ch, self.input_ch_views },
        { dim = -1 }))
    local h = input_pts
    -- for i, l in enumerate(self.pts_linears):
    for i = 0, #self.pts_linears - 1 do
        -- h = self.pts_linears[i](h)
        h = self.pts_linears[i + 1](h)
        h = F.relu(h)
        -- if i in self.skips:
        if contains(self.skips, i) then
            h = tide.cat({ input_pts, h }, -1)
        end
    end

    local outputs
    if self.use_viewdirs then
        local alpha = self.alpha_linear(h)
        local feature = self.feature_linear(h)
        h = tide.cat({ feature, input_views }, -1)

        -- for i, l in enumerate(self.views_linears):
        for i = 1, #self.views_linears do
            h = self.views_linears[i](h)
            h = F.relu(h)
        end

        local rgb = self.rgb_linear(h)
        outputs = tide.cat({ rgb, alpha }, -1)
    else
        outputs = self.output_linear(h)
    end

    return outputs
end

-- Ray helpers
-- def get_rays(H, W, K, c2w):
local function get_rays(H, W, K, c2w)
    -- i, j = torch.meshgrid(torch.linspace(0, W-1, W), torch.linspace(0, H-1, H))  # 'ij'
    local i, j = unpack(tide.meshgrid(tide.linspace(0, W - 1, W), tide.linspace(0, H - 1, H)))
    i = i:t()
    j = j:t()
    -- dirs = torch.stack([(i-K[0][2])/K[0][0], -(j-K[1][2])/K[1][1], -torch.ones_like(i)], -1)
    local dirs = tide.stack({ (i - K[1][3]) / K[1][1], -(j - K[2][3]) / K[2][2],
        -tide.ones_like(i) }, -1)
    -- Rotate ray directions from camera frame to the world frame
    -- rays_d = torch.sum(dirs[..., np.newaxis, :] * c2w[:3,:3], -1)
    local rays_d = tide.sum(dirs[{ "...", tide.newaxis, {} }] * c2w[{ { 1, 3 }, { 1, 3 } }], -1)
    -- Translate camera frame's origin to the world frame. It is the origin of all rays.
    -- rays_o = c2w[:3,-1].expand(rays_d.shape)
    local rays_o = c2w[{ { 1, 3 }, -1 }]:expand(rays_d.shape)
    return rays_o, rays_d
end

-- def get_rays_np(H, W, K, c2w):  (NumPy's, on tide tensors)
local function get_rays_np(H, W, K, c2w)
    -- i, j = np.meshgrid(np.arange(W, dtype=np.float32), np.arange(H, dtype=np.float32),
    --                    indexing='xy')
    local i, j = unpack(tide.meshgrid(tide.arange(W, { dtype = "float32" }),
        tide.arange(H, { dtype = "float32" }), { indexing = "xy" }))
    -- dirs = np.stack([(i-K[0][2])/K[0][0], -(j-K[1][2])/K[1][1], -np.ones_like(i)], -1)
    local dirs = tide.stack({ (i - K[1][3]) / K[1][1], -(j - K[2][3]) / K[2][2],
        -tide.ones_like(i) }, -1)
    -- rays_d = np.sum(dirs[..., np.newaxis, :] * c2w[:3,:3], -1)
    local rays_d = tide.sum(dirs[{ "...", tide.newaxis, {} }] * c2w[{ { 1, 3 }, { 1, 3 } }], -1)
    -- rays_o = np.broadcast_to(c2w[:3,-1], np.shape(rays_d))
    local rays_o = tide.broadcast_to(c2w[{ { 1, 3 }, -1 }], rays_d.shape)
    return rays_o, rays_d
end

-- def ndc_rays(H, W, focal, near, rays_o, rays_d):
local function ndc_rays(H, W, focal, near, rays_o, rays_d)
    -- Shift ray origins to near plane
    -- t = -(near + rays_o[...,2]) / rays_d[...,2]
    local t = -(near + rays_o[{ "...", 3 }]) / rays_d[{ "...", 3 }]
    -- rays_o = rays_o + t[...,None] * rays_d
    rays_o = rays_o + t[{ "...", tide.newaxis }] * rays_d

    -- Projection
    -- o0 = -1./(W/(2.*focal)) * rays_o[...,0] / rays_o[...,2]
    local o0 = -1. / (W / (2. * focal)) * rays_o[{ "...", 1 }] / rays_o[{ "...", 3 }]
    local o1 = -1. / (H / (2. * focal)) * rays_o[{ "...", 2 }] / rays_o[{ "...", 3 }]
    local o2 = 1. + 2. * near / rays_o[{ "...", 3 }]

    -- d0 = -1./(W/(2.*focal)) * (rays_d[...,0]/rays_d[...,2] - rays_o[...,0]/rays_o[...,2])
    local d0 = -1. / (W / (2. * focal)) * (rays_d[{ "...", 1 }] / rays_d[{ "...", 3 }]
        - rays_o[{ "...", 1 }] / rays_o[{ "...", 3 }])
    local d1 = -1. / (H / (2. * focal)) * (rays_d[{ "...", 2 }] / rays_d[{ "...", 3 }]
        - rays_o[{ "...", 2 }] / rays_o[{ "...", 3 }])
    local d2 = -2. * near / rays_o[{ "...", 3 }]

    rays_o = tide.stack({ o0, o1, o2 }, -1)
    rays_d = tide.stack({ d0, d1, d2 }, -1)

    return rays_o, rays_d
end

-- Hierarchical sampling (section 5.2)
-- def sample_pdf(bins, weights, N_samples, det=False, pytest=False):  (pytest's NumPy u left out)
local function sample_pdf(bins, weights, N_samples, det)
    -- Get pdf
    weights = weights + 1e-5 -- prevent nans
    -- pdf = weights / torch.sum(weights, -1, keepdim=True)
    local pdf = weights / tide.sum(weights, -1, true)
    local cdf = tide.cumsum(pdf, -1)
    -- cdf = torch.cat([torch.zeros_like(cdf[...,:1]), cdf], -1)  # (batch, len(bins))
    cdf = tide.cat({ tide.zeros_like(cdf[{ "...", { 1, 1 } }]), cdf }, -1)

    -- Take uniform samples
    local u
    if det then
        -- u = torch.linspace(0., 1., steps=N_samples)
        u = tide.linspace(0., 1., { steps = N_samples })
        -- u = u.expand(list(cdf.shape[:-1]) + [N_samples])
        u = u:expand(cdf.shape[{ { 1, -2 } }] + { N_samples })
    else
        -- u = torch.rand(list(cdf.shape[:-1]) + [N_samples])
        u = tide.rand(cdf.shape[{ { 1, -2 } }] + { N_samples })
    end

    -- Invert CDF
    u = u:contiguous()
    -- inds = torch.searchsorted(cdf, u, right=True)  (tide's: PyTorch's plus one)
    local inds = tide.searchsorted(cdf, u, { right = true })
    -- below = torch.max(torch.zeros_like(inds-1), inds-1)  (1-based: at least 1)
    local below = tide.max(tide.ones_like(inds - 1), inds - 1)
    -- above = torch.min((cdf.shape[-1]-1) * torch.ones_like(inds), inds)  (at most the size)
    local above = tide.min(cdf.shape[-1] * tide.ones_like(inds), inds)
    local inds_g = tide.stack({ below, above }, -1) -- (batch, N_samples, 2)

    -- matched_shape = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
    local matched_shape = { inds_g.shape[1], inds_g.shape[2], cdf.shape[-1] }
    -- cdf_g = torch.gather(cdf.unsqueeze(1).expand(matched_shape), 2, inds_g)
    local cdf_g = tide.gather(cdf:unsqueeze(2):expand(matched_shape), 3, inds_g)
    local bins_g = tide.gather(bins:unsqueeze(2):expand(matched_shape), 3, inds_g)

    -- denom = (cdf_g[...,1]-cdf_g[...,0])
    local denom = (cdf_g[{ "...", 2 }] - cdf_g[{ "...", 1 }])
    -- denom = torch.where(denom<1e-5, torch.ones_like(denom), denom)
    denom = tide.where(denom:lt(1e-5), tide.ones_like(denom), denom)
    -- t = (u-cdf_g[...,0])/denom
    local t = (u - cdf_g[{ "...", 1 }]) / denom
    -- samples = bins_g[...,0] + t * (bins_g[...,1]-bins_g[...,0])
    local samples = bins_g[{ "...", 1 }] + t * (bins_g[{ "...", 2 }] - bins_g[{ "...", 1 }])

    return samples
end

---------------------------------------------------------------------------------------------
-- 2. run_nerf.py
---------------------------------------------------------------------------------------------
local DEBUG = false

-- def batchify(fn, chunk):
local function batchify(fn, chunk)
    if chunk == nil then
        return fn
    end
    local function ret(inputs)
        -- return torch.cat([fn(inputs[i:i+chunk]) for i in range(0, inputs.shape[0], chunk)], 0)
        local outs = {}
        for i = 0, inputs.shape[1] - 1, chunk do
            outs[#outs + 1] = fn(inputs[{ { i + 1, i + chunk } }])
        end
        return tide.cat(outs, 1)
    end
    return ret
end

-- def run_network(inputs, viewdirs, fn, embed_fn, embeddirs_fn, netchunk=1024*64):
local function run_network(inputs, viewdirs, fn, embed_fn, embeddirs_fn, netchunk)
    netchunk = netchunk or 1024 * 64
    -- inputs_flat = torch.reshape(inputs, [-1, inputs.shape[-1]])
    local inputs_flat = tide.reshape(inputs, { -1, inputs.shape[-1] })
    local embedded = embed_fn(inputs_flat)

    if viewdirs ~= nil then
        -- input_dirs = viewdirs[:,None].expand(inputs.shape)
        local input_dirs = viewdirs[{ {}, tide.newaxis }]:expand(inputs.shape)
        local input_dirs_flat = tide.reshape(input_dirs, { -1, input_dirs.shape[-1] })
        local embedded_dirs = embeddirs_fn(input_dirs_flat)
        embedded = tide.cat({ embedded, embedded_dirs }, -1)
    end

    local outputs_flat = batchify(fn, netchunk)(embedded)
    -- outputs = torch.reshape(outputs_flat, list(inputs.shape[:-1]) + [outputs_flat.shape[-1]])
    local outputs = tide.reshape(outputs_flat, inputs.shape[{ { 1, -2 } }] +
        { outputs_flat.shape[-1] })
    return outputs
end

-- def raw2outputs(raw, z_vals, rays_d, raw_noise_std=0, white_bkgd=False, pytest=False):
local function raw2outputs(raw, z_vals, rays_d, raw_noise_std, white_bkgd)
    raw_noise_std = raw_noise_std or 0
    -- raw2alpha = lambda raw, dists, act_fn=F.relu: 1.-torch.exp(-act_fn(raw)*dists)
    local raw2alpha = function(raw_, dists, act_fn)
        act_fn = act_fn or F.relu
        return 1. - tide.exp(-act_fn(raw_) * dists)
    end

    -- dists = z_vals[...,1:] - z_vals[...,:-1]
    local dists = z_vals[{ "...", { 2, -1 } }] - z_vals[{ "...", { 1, -2 } }]
    -- dists = torch.cat([dists, torch.Tensor([1e10]).expand(dists[...,:1].shape)], -1)
    dists = tide.cat({ dists, tide.Tensor({ 1e10 }):expand(dists[{ "...", { 1, 1 } }].shape) }, -1)

    -- dists = dists * torch.norm(rays_d[...,None,:], dim=-1)
    dists = dists * tide.norm(rays_d[{ "...", tide.newaxis, {} }], { dim = -1 })

    -- rgb = torch.sigmoid(raw[...,:3])  # [N_rays, N_samples, 3]
    local rgb = tide.sigmoid(raw[{ "...", { 1, 3 } }])
    local noise = 0.
    if raw_noise_std > 0. then
        -- noise = torch.randn(raw[...,3].shape) * raw_noise_std
        noise = tide.randn(raw[{ "...", 4 }].shape) * raw_noise_std
    end

    -- alpha = raw2alpha(raw[...,3] + noise, dists)  # [N_rays, N_samples]
    local alpha = raw2alpha(raw[{ "...", 4 }] + noise, dists)
    -- weights = alpha * torch.cumprod(torch.cat([torch.ones((alpha.shape[0], 1)),
    --                                            1.-alpha + 1e-10], -1), -1)[:, :-1]
    local weights = alpha * tide.cumprod(tide.cat({ tide.ones({ alpha.shape[1], 1 }),
        1. - alpha + 1e-10 }, -1), -1)[{ {}, { 1, -2 } }]
    -- rgb_map = torch.sum(weights[...,None] * rgb, -2)  # [N_rays, 3]
    local rgb_map = tide.sum(weights[{ "...", tide.newaxis }] * rgb, -2)

    local depth_map = tide.sum(weights * z_vals, -1)
    -- disp_map = 1./torch.max(1e-10 * torch.ones_like(depth_map),
    --                        depth_map / torch.sum(weights, -1))
    local disp_map = 1. / tide.max(1e-10 * tide.ones_like(depth_map),
        depth_map / tide.sum(weights, -1))
    local acc_map = tide.sum(weights, -1)

    if white_bkgd then
        -- rgb_map = rgb_map + (1.-acc_map[...,None])
        rgb_map = rgb_map + (1. - acc_map[{ "...", tide.newaxis }])
    end

    return rgb_map, disp_map, acc_map, weights, depth_map
end

-- def render_rays(ray_batch, network_fn, network_query_fn, N_samples, retraw=False,
--                 lindisp=False, perturb=0., N_importance=0, network_fine=None,
--                 white_bkgd=False, raw_noise_std=0., verbose=False, pytest=False):
-- (Python's keywords: the arguments after ray_batch come in one table, **kwargs as called)
local function render_rays(ray_batch, kw)
    local network_fn, network_query_fn, N_samples = kw.network_fn, kw.network_query_fn,
        kw.N_samples
    local retraw, lindisp, perturb = kw.retraw or false, kw.lindisp or false, kw.perturb or 0.
    local N_importance, network_fine = kw.N_importance or 0, kw.network_fine
    local white_bkgd, raw_noise_std = kw.white_bkgd or false, kw.raw_noise_std or 0.

    local N_rays = ray_batch.shape[1]
    -- rays_o, rays_d = ray_batch[:,0:3], ray_batch[:,3:6] # [N_rays, 3] each
    local rays_o, rays_d = ray_batch[{ {}, { 1, 3 } }], ray_batch[{ {}, { 4, 6 } }]
    -- viewdirs = ray_batch[:,-3:] if ray_batch.shape[-1] > 8 else None
    local viewdirs = ray_batch.shape[-1] > 8 and ray_batch[{ {}, { -3, -1 } }] or nil
    -- bounds = torch.reshape(ray_batch[...,6:8], [-1,1,2])
    local bounds = tide.reshape(ray_batch[{ "...", { 7, 8 } }], { -1, 1, 2 })
    -- near, far = bounds[...,0], bounds[...,1] # [-1,1]
    local near, far = bounds[{ "...", 1 }], bounds[{ "...", 2 }]

    -- t_vals = torch.linspace(0., 1., steps=N_samples)
    local t_vals = tide.linspace(0., 1., { steps = N_samples })
    local z_vals
    if not lindisp then
        z_vals = near * (1. - t_vals) + far * (t_vals)
    else
        z_vals = 1. / (1. / near * (1. - t_vals) + 1. / far * (t_vals))
    end

    -- z_vals = z_vals.expand([N_rays, N_samples])
    z_vals = z_vals:expand({ N_rays, N_samples })

    if perturb > 0. then
        -- get intervals between samples
        -- mids = .5 * (z_vals[...,1:] + z_vals[...,:-1])
        local mids = .5 * (z_vals[{ "...", { 2, -1 } }] + z_vals[{ "...", { 1, -2 } }])
        -- upper = torch.cat([mids, z_vals[...,-1:]], -1)
        local upper = tide.cat({ mids, z_vals[{ "...", { -1, -1 } }] }, -1)
        -- lower = torch.cat([z_vals[...,:1], mids], -1)
        local lower = tide.cat({ z_vals[{ "...", { 1, 1 } }], mids }, -1)
        -- stratified samples in those intervals
        local t_rand = tide.rand(z_vals.shape)

        z_vals = lower + (upper - lower) * t_rand
    end

    -- pts = rays_o[...,None,:] + rays_d[...,None,:] * z_vals[...,:,None]
    local pts = rays_o[{ "...", tide.newaxis, {} }] + rays_d[{ "...", tide.newaxis, {} }] *
        z_vals[{ "...", {}, tide.newaxis }] -- [N_rays, N_samples, 3]

    local raw = network_query_fn(pts, viewdirs, network_fn)
    -- rgb_map, disp_map, acc_map, weights, depth_map = raw2outputs(raw, z_vals, rays_d, ...)
    local rgb_map, disp_map, acc_map, weights = raw2outputs(raw, z_vals, rays_d, raw_noise_std,
        white_bkgd)

    local rgb_map_0, disp_map_0, acc_map_0, z_samples
    if N_importance > 0 then
        rgb_map_0, disp_map_0, acc_map_0 = rgb_map, disp_map, acc_map

        -- z_vals_mid = .5 * (z_vals[...,1:] + z_vals[...,:-1])
        local z_vals_mid = .5 * (z_vals[{ "...", { 2, -1 } }] + z_vals[{ "...", { 1, -2 } }])
        -- z_samples = sample_pdf(z_vals_mid, weights[...,1:-1], N_importance, det=(perturb==0.))
        z_samples = sample_pdf(z_vals_mid, weights[{ "...", { 2, -2 } }], N_importance,
            perturb == 0.)
        z_samples = z_samples:detach()

        -- z_vals, _ = torch.sort(torch.cat([z_vals, z_samples], -1), -1)
        z_vals = tide.sort(tide.cat({ z_vals, z_samples }, -1), -1)
        -- pts = rays_o[...,None,:] + rays_d[...,None,:] * z_vals[...,:,None]
        pts = rays_o[{ "...", tide.newaxis, {} }] + rays_d[{ "...", tide.newaxis, {} }] *
            z_vals[{ "...", {}, tide.newaxis }] -- [N_rays, N_samples + N_importance, 3]

        -- run_fn = network_fn if network_fine is None else network_fine
        local run_fn = network_fine == nil and network_fn or network_fine
        raw = network_query_fn(pts, viewdirs, run_fn)

        -- rgb_map, disp_map, acc_map, weights, depth_map = raw2outputs(raw, z_vals, rays_d, ...)
        rgb_map, disp_map, acc_map = raw2outputs(raw, z_vals, rays_d, raw_noise_std, white_bkgd)
    end

    -- ret = {'rgb_map' : rgb_map, 'disp_map' : disp_map, 'acc_map' : acc_map}
    local ret = { rgb_map = rgb_map, disp_map = disp_map, acc_map = acc_map }
    if retraw then
        ret['raw'] = raw
    end
    if N_importance > 0 then
        ret['rgb0'] = rgb_map_0
        ret['disp0'] = disp_map_0
        ret['acc0'] = acc_map_0
        -- ret['z_std'] = torch.std(z_samples, dim=-1, unbiased=False)  # [N_rays]
        ret['z_std'] = tide.std(z_samples, { dim = -1, unbiased = false })
    end

    for k, v in pairs(ret) do
        -- if (torch.isnan(ret[k]).any() or torch.isinf(ret[k]).any()) and DEBUG:
        if (tide.isnan(v):any():item() or tide.isinf(v):any():item()) and DEBUG then
            print(string.format("! [Numerical Error] %s contains nan or inf.", k))
        end
    end

    return ret
end

-- def batchify_rays(rays_flat, chunk=1024*32, **kwargs):
local function batchify_rays(rays_flat, chunk, kwargs)
    chunk = chunk or 1024 * 32
    local all_ret = {}
    local order = {} -- Python's dicts keep their insertion order; a Lua table does not
    -- for i in range(0, rays_flat.shape[0], chunk):
    for i = 0, rays_flat.shape[1] - 1, chunk do
        -- ret = render_rays(rays_flat[i:i+chunk], **kwargs)
        local ret = render_rays(rays_flat[{ { i + 1, i + chunk } }], kwargs)
        for k, v in pairs(ret) do
            if all_ret[k] == nil then
                all_ret[k] = {}
                order[#order + 1] = k
            end
            all_ret[k][#all_ret[k] + 1] = v
        end
    end

    -- all_ret = {k : torch.cat(all_ret[k], 0) for k in all_ret}
    for _, k in ipairs(order) do
        all_ret[k] = tide.cat(all_ret[k], 1)
    end
    return all_ret
end

-- def render(H, W, K, chunk=1024*32, rays=None, c2w=None, ndc=True, near=0., far=1.,
--            use_viewdirs=False, c2w_staticcam=None, **kwargs):
-- (every argument after K by name in one table; the ones render does not name go on to
-- render_rays, as **kwargs)
local RENDER_OWN = { chunk = true, rays = true, c2w = true, ndc = true, near = true, far = true,
    use_viewdirs = true, c2w_staticcam = true }
local function render(H, W, K, opts)
    local chunk, rays, c2w = opts.chunk or 1024 * 32, opts.rays, opts.c2w
    local ndc = opts.ndc
    if ndc == nil then ndc = true end
    local near, far = opts.near or 0., opts.far or 1.
    local use_viewdirs, c2w_staticcam = opts.use_viewdirs or false, opts.c2w_staticcam
    local kwargs = {}
    for k, v in pairs(opts) do
        if not RENDER_OWN[k] then kwargs[k] = v end
    end

    local rays_o, rays_d
    if c2w ~= nil then
        -- special case to render full image
        rays_o, rays_d = get_rays(H, W, K, c2w)
    else
        -- use provided ray batch
        -- rays_o, rays_d = rays
        rays_o, rays_d = rays[1], rays[2]
    end

    local viewdirs
    if use_viewdirs then
        -- provide ray directions as input
        viewdirs = rays_d
        if c2w_staticcam ~= nil then
            -- special case to visualize effect of viewdirs
            rays_o, rays_d = get_rays(H, W, K, c2w_staticcam)
        end
        -- viewdirs = viewdirs / torch.norm(viewdirs, dim=-1, keepdim=True)
        viewdirs = viewdirs / tide.norm(viewdirs, { dim = -1, keepdim = true })
        -- viewdirs = torch.reshape(viewdirs, [-1,3]).float()
        viewdirs = tide.reshape(viewdirs, { -1, 3 }):float()
    end

    local sh = rays_d.shape -- [..., 3]
    if ndc then
        -- for forward facing scenes
        -- rays_o, rays_d = ndc_rays(H, W, K[0][0], 1., rays_o, rays_d)
        rays_o, rays_d = ndc_rays(H, W, K[1][1], 1., rays_o, rays_d)
    end

    -- Create ray batch
    rays_o = tide.reshape(rays_o, { -1, 3 }):float()
    rays_d = tide.reshape(rays_d, { -1, 3 }):float()

    -- near, far = near * torch.ones_like(rays_d[...,:1]), far * torch.ones_like(rays_d[...,:1])
    near, far = near * tide.ones_like(rays_d[{ "...", { 1, 1 } }]),
        far * tide.ones_like(rays_d[{ "...", { 1, 1 } }])
    rays = tide.cat({ rays_o, rays_d, near, far }, -1)
    if use_viewdirs then
        rays = tide.cat({ rays, viewdirs }, -1)
    end

    -- Render and reshape
    local all_ret = batchify_rays(rays, chunk, kwargs)
    for k, v in pairs(all_ret) do
        -- k_sh = list(sh[:-1]) + list(all_ret[k].shape[1:])
        local k_sh = sh[{ { 1, -2 } }] + v.shape[{ { 2, -1 } }]
        all_ret[k] = tide.reshape(v, k_sh)
    end

    local k_extract = { 'rgb_map', 'disp_map', 'acc_map' }
    -- ret_list = [all_ret[k] for k in k_extract]
    local ret_list = {}
    for n, k in ipairs(k_extract) do
        ret_list[n] = all_ret[k]
    end
    -- ret_dict = {k : all_ret[k] for k in all_ret if k not in k_extract}
    local ret_dict = {}
    for k, v in pairs(all_ret) do
        if not contains(k_extract, k) then ret_dict[k] = v end
    end
    -- return ret_list + [ret_dict]
    ret_list[#ret_list + 1] = ret_dict
    return unpack(ret_list)
end

-- def create_nerf(args):  (without the checkpoint loading)
local function create_nerf(args)
    local embed_fn, input_ch = get_embedder(args.multires, args.i_embed)

    local input_ch_views = 0
    local embeddirs_fn = nil
    if args.use_viewdirs then
        embeddirs_fn, input_ch_views = get_embedder(args.multires_views, args.i_embed)
    end
    local output_ch = args.N_importance > 0 and 5 or 4
    local skips = { 4 }
    -- model = NeRF(D=args.netdepth, W=args.netwidth, input_ch=input_ch, output_ch=output_ch,
    --              skips=skips, input_ch_views=input_ch_views, use_viewdirs=args.use_viewdirs)
    local model = NeRF({ D = args.netdepth, W = args.netwidth, input_ch = input_ch,
        output_ch = output_ch, skips = skips, input_ch_views = input_ch_views,
        use_viewdirs = args.use_viewdirs })
    -- grad_vars = list(model.parameters())
    local grad_vars = model:parameters()

    local model_fine = nil
    if args.N_importance > 0 then
        model_fine = NeRF({ D = args.netdepth_fine, W = args.netwidth_fine, input_ch = input_ch,
            output_ch = output_ch, skips = skips, input_ch_views = input_ch_views,
            use_viewdirs = args.use_viewdirs })
        -- grad_vars += list(model_fine.parameters())
        for _, p in ipairs(model_fine:parameters()) do
            grad_vars[#grad_vars + 1] = p
        end
    end

    -- network_query_fn = lambda inputs, viewdirs, network_fn : run_network(inputs, viewdirs,
    --     network_fn, embed_fn=embed_fn, embeddirs_fn=embeddirs_fn, netchunk=args.netchunk)
    local network_query_fn = function(inputs, viewdirs, network_fn)
        return run_network(inputs, viewdirs, network_fn, embed_fn, embeddirs_fn, args.netchunk)
    end

    -- Create optimizer
    -- optimizer = torch.optim.Adam(params=grad_vars, lr=args.lrate, betas=(0.9, 0.999))
    local optimizer = tide.optim.Adam({ params = grad_vars, lr = args.lrate,
        betas = { 0.9, 0.999 } })

    local start = 0

    local render_kwargs_train = {
        ['network_query_fn'] = network_query_fn,
        ['perturb'] = args.perturb,
        ['N_importance'] = args.N_importance,
        ['network_fine'] = model_fine,
        ['N_samples'] = args.N_samples,
        ['network_fn'] = model,
        ['use_viewdirs'] = args.use_viewdirs,
        ['white_bkgd'] = args.white_bkgd,
        ['raw_noise_std'] = args.raw_noise_std,
    }

    -- NDC only good for LLFF-style forward facing data
    if args.dataset_type ~= 'llff' or args.no_ndc then
        render_kwargs_train['ndc'] = false
        render_kwargs_train['lindisp'] = args.lindisp
    end

    -- render_kwargs_test = {k : render_kwargs_train[k] for k in render_kwargs_train}
    local render_kwargs_test = {}
    for k, v in pairs(render_kwargs_train) do render_kwargs_test[k] = v end
    -- render_kwargs_test['perturb'] = False  (Python's False is 0 in render_rays' perturb > 0.)
    render_kwargs_test['perturb'] = 0.
    render_kwargs_test['raw_noise_std'] = 0.

    return render_kwargs_train, render_kwargs_test, start, grad_vars, optimizer
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
-- the deterministic weights the PyTorch reference script sets (sin/cos of arange)
local function det_init(lin, k)
    tide.no_grad(function()
        local n = lin.weight:numel()
        lin.weight:copy_((tide.sin(tide.arange(n) * 0.37 + k) * 0.5):reshape(lin.weight.shape))
        lin.bias:copy_(tide.cos(tide.arange(lin.bias:numel()) * 0.5 + k) * 0.1)
    end)
end
local function init_nerf(m, k)
    local lins = {}
    for i = 1, #m.pts_linears do lins[#lins + 1] = m.pts_linears[i] end
    for i = 1, #m.views_linears do lins[#lins + 1] = m.views_linears[i] end
    for _, l in ipairs({ m.feature_linear, m.alpha_linear, m.rgb_linear }) do
        lins[#lins + 1] = l
    end
    for i, l in ipairs(lins) do det_init(l, k + i - 1) end
end

local H, W, focal = 4, 4, 5.
-- K = np.array([[focal, 0, 0.5*W], [0, focal, 0.5*H], [0, 0, 1]])
local K = { { focal, 0, 0.5 * W }, { 0, focal, 0.5 * H }, { 0, 0, 1 } }
local C2W = { { 0.6, 0., 0.8, 1. }, { 0., 1., 0., 2. }, { -0.8, 0., 0.6, 3. } }

local function flat(t)
    return t:detach():reshape(-1):tolist()
end

-- PyTorch 1.13's values (the reference script pastes run_nerf_helpers.py and run_nerf.py as is)
local REF = {
    rays_o = {
        1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2,
        3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3,
    },
    rays_d = {
        -1.03999996, 0.400000006, -0.280000001, -0.920000017, 0.400000006, -0.439999998,
        -0.800000012, 0.400000006, -0.600000024, -0.680000007, 0.400000006, -0.76000005,
        -1.03999996, 0.200000003, -0.280000001, -0.920000017, 0.200000003, -0.439999998,
        -0.800000012, 0.200000003, -0.600000024, -0.680000007, 0.200000003, -0.76000005,
        -1.03999996, 0, -0.280000001, -0.920000017, 0, -0.439999998, -0.800000012, 0,
        -0.600000024, -0.680000007, 0, -0.76000005, -1.03999996, -0.200000003, -0.280000001,
        -0.920000017, -0.200000003, -0.439999998, -0.800000012, -0.200000003, -0.600000024,
        -0.680000007, -0.200000003, -0.76000005,
    },
    ndc_o = {
        -34.6428566, 19.2857151, -1, -18.40909, 14.09091, -1, -10.833334, 11.6666679, -1,
        -6.4473691, 10.2631598, -1.00000048, -34.6428566, 12.1428576, -1, -18.40909,
        9.54545498, -1, -10.833334, 8.33333397, -1, -6.4473691, 7.63158035, -1.00000048,
        -34.6428566, 5, -1, -18.40909, 5, -1, -10.833334, 5, -1, -6.4473691, 5.00000143,
        -1.00000048, -34.6428566, -2.14285731, -1, -18.40909, 0.454545319, -1, -10.833334,
        1.66666651, -1, -6.4473691, 2.36842179, -1.00000048,
    },
    ndc_d = {
        25.3571415, -15.7142849, 2, 13.181818, -11.818182, 2, 7.50000048, -10.000001, 2,
        4.21052742, -8.94737053, 2.00000048, 25.3571415, -10.3571424, 2, 13.181818, -8.409091,
        2, 7.50000048, -7.50000048, 2, 4.21052742, -6.97368574, 2.00000048, 25.3571415, -5, 2,
        13.181818, -5, 2, 7.50000048, -5, 2, 4.21052742, -5.00000095, 2.00000048, 25.3571415,
        0.357142985, 2, 13.181818, -1.590909, 2, 7.50000048, -2.49999976, 2, 4.21052742,
        -3.0263164, 2.00000048,
    },
    pdf = {
        2, 2.99089241, 3.31512833, 4.22838545, 4.47036552, 4.78437138, 5.40454483, 6, 2.5,
        2.95317769, 3.37930512, 3.78133917, 4.37810326, 5.63366604, 6.10029173, 6.5,
    },
    ["r2o_false"] = {
        { 0.544902623, 0.675545216, 0.764788866, 0.526530683, 0.614008963, 0.695066214 },
        { 0.400926173, 0.354909211 },
        { 0.966161251, 0.952617526 },
        {
            0.649689317, 0.160671607, 0, 0, 0.104046196, 0.0517541133, 0, 0, 0.365369976,
            0.436309248, 0, 0, 0.00486489059, 0.135875538, 0.0101978825, 0,
        },
        { 2.40982342, 2.68411613 },
    },
    ["r2o_true"] = {
        { 0.578741372, 0.709383965, 0.798627615, 0.573913157, 0.661391437, 0.742448688 },
        { 0.400926173, 0.354909211 },
        { 0.966161251, 0.952617526 },
        {
            0.649689317, 0.160671607, 0, 0, 0.104046196, 0.0517541133, 0, 0, 0.365369976,
            0.436309248, 0, 0, 0.00486489059, 0.135875538, 0.0101978825, 0,
        },
        { 2.40982342, 2.68411613 },
    },
    render = {
        {
            0.146267727, 0.792775691, 0.228845954, 0.189666867, 0.733622968, 0.292758107,
            0.316988826, 0.592928112, 0.42096597,
        },
        { 0.182158843, 0.191210955, 0.179694667 },
        { 1, 1, 1 },
        {
            0.481325954, 0.235384569, 0.319609046, 0.509418249, 0.530588269, 0.496018171,
            0.607098937, 0.473517329, 0.483346283,
        },
        { 1.088117, 0.96987623, 1.22273612 },
        {
            -2.08846045, 1.1637342, -0.564941049, -0.416679949, -1.82760882, 0.977693319,
            -0.459829479, -0.349866748,
        },
    },
    losses = { 0.177109912, 0.111770391, 0.119029455 },
    psnrs = { 9.39374542, 11.3530674, 10.9187717 },
}

describe("ported scripts 61: yenchenlin/nerf-pytorch", function()
    it("img2mse, mse2psnr, to8b", function()
        local x, y = tide.tensor({ 0.1, 0.5, 0.9 }), tide.tensor({ 0.2, 0.5, 0.6 })
        local mse = img2mse(x, y)
        assert.is_true(ported.close(mse:item(), (0.01 + 0.09) / 3, 1e-6))
        local psnr = mse2psnr(mse)
        assert.are.same({ 1 }, psnr.shape)
        assert.is_true(ported.close(psnr:item(), -10 * math.log(0.1 / 3) / math.log(10), 1e-5))
        local img = to8b(tide.tensor({ -0.5, 0.0, 0.5, 0.999, 1.5 }))
        assert.are.equal("uint8", img.dtype)
        assert.are.same({ 0, 0, 127, 254, 255 }, img:tolist())
    end)
    it("Embedder and get_embedder: the positional encoding's closed form", function()
        local embed, input_ch = get_embedder(2)
        assert.are.equal(3 + 3 * 2 * 2, input_ch)
        local x = tide.tensor({ { 0.1, -0.2, 0.3 }, { 1., 2., -3. } })
        local e = embed(x)
        assert.are.same({ 2, 15 }, e.shape)
        -- [x, sin(x), cos(x), sin(2x), cos(2x)] (freq_bands 2^linspace(0, 1, 2))
        local xs = x:tolist()
        local want = {}
        for r = 1, 2 do
            for _, f in ipairs({ function(v) return v end, math.sin, math.cos,
                function(v) return math.sin(2 * v) end, function(v) return math.cos(2 * v) end }) do
                for c = 1, 3 do want[#want + 1] = f(xs[r][c]) end
            end
        end
        assert_close_list(want, flat(e), 1e-6, "embed")
        -- log_sampling=False: linear frequencies 1, 8/3 + 1/3, ..., 2^3
        local eo = Embedder({ include_input = false, input_dims = 3, max_freq_log2 = 3,
            num_freqs = 4, log_sampling = false, periodic_fns = { tide.sin } })
        assert.are.equal(12, eo.out_dim)
        local lin = eo:embed(x)
        assert.are.same({ 2, 12 }, lin.shape)
        assert.is_true(ported.close(lin[{ 2, 7 }]:item(), math.sin(xs[2][1] * (1 + 2 * 7 / 3)),
            1e-5))
        -- i = -1: the identity, 3 channels
        local ident, ch = get_embedder(2, -1)
        assert.are.equal(3, ch)
        assert.is_true(tide.equal(ident(x), x))
    end)

    it("NeRF: the MLP's shapes, its skip and its heads", function()
        tide.manual_seed(0)
        local model = NeRF({ D = 2, W = 16, input_ch = 15, input_ch_views = 9,
            use_viewdirs = true })
        local out = model(tide.randn(5, 24))
        assert.are.same({ 5, 4 }, out.shape)
        assert.are.same({ 8, 25 }, model.views_linears[1].weight.shape)
        assert.are.same({ 3, 8 }, model.rgb_linear.weight.shape)
        assert.is_nil(model.output_linear)
        -- skips=[1]: layer 2 (0-based 2) takes W + input_ch, after the concat of layer 1's output
        local plain = NeRF(3, 8, { input_ch = 3, input_ch_views = 0, output_ch = 5, skips = { 1 } })
        assert.are.same({ 8, 8 + 3 }, plain.pts_linears[3].weight.shape)
        assert.are.same({ 8, 8 }, plain.pts_linears[2].weight.shape)
        assert.are.same({ 7, 5 }, plain(tide.randn(7, 3)).shape)
        assert.is_nil(plain.feature_linear)
        -- 3 pts_linears, 1 views_linear, output_linear: a weight and a bias each
        assert.are.equal(5 * 2, #plain:parameters())
    end)

    it("get_rays, get_rays_np and ndc_rays against PyTorch 1.13", function()
        local c2w = tide.tensor(C2W)
        local rays_o, rays_d = get_rays(H, W, K, c2w)
        assert.are.same({ 4, 4, 3 }, rays_o.shape)
        assert.are.same({ 4, 4, 3 }, rays_d.shape)
        assert_close_list(REF.rays_o, flat(rays_o), 1e-6, "rays_o")
        assert_close_list(REF.rays_d, flat(rays_d), 1e-6, "rays_d")
        -- the 'xy' meshgrid of get_rays_np gives the same rays
        local np_o, np_d = get_rays_np(H, W, K, c2w)
        assert.is_true(tide.allclose(np_d, rays_d, { atol = 1e-6 }))
        assert.is_true(tide.equal(np_o, rays_o))
        local o, d = ndc_rays(H, W, focal, 1., rays_o, rays_d)
        assert_close_list(REF.ndc_o, flat(o), 1e-5, "ndc rays_o")
        assert_close_list(REF.ndc_d, flat(d), 1e-5, "ndc rays_d")
    end)

    it("sample_pdf: det=True against PyTorch, random u inside the bins", function()
        -- bins = torch.linspace(2., 6., 7).expand(2, 7) + torch.tensor([[0.], [0.5]])
        local bins = tide.linspace(2., 6., 7):expand(2, 7) + tide.tensor({ { 0. }, { 0.5 } })
        local weights = tide.sin(tide.arange(12) * 0.7):abs():reshape(2, 6)
        weights[{ 1, 3 }] = 0.
        local s = sample_pdf(bins, weights, 8, true)
        assert.are.same({ 2, 8 }, s.shape)
        assert_close_list(REF.pdf, flat(s), 1e-5, "sample_pdf")
        tide.manual_seed(1)
        local r = sample_pdf(bins, weights, 16, false)
        assert.are.same({ 2, 16 }, r.shape)
        assert.is_true(r:ge(bins[{ {}, { 1, 1 } }]):all():item())
        assert.is_true(r:le(bins[{ {}, { -1, -1 } }]):all():item())
    end)

    it("raw2outputs against PyTorch, white_bkgd too; raw_noise_std draws noise", function()
        local raw = tide.sin(tide.arange(64) * 0.37):reshape(2, 8, 4) * 2
        local z_vals = tide.linspace(2., 6., 8):expand(2, 8) + tide.tensor({ { 0. }, { 0.1 } })
        local rd = tide.tensor({ { 0.1, -0.2, -1. }, { 0.3, 0.2, -1. } })
        for _, wb in ipairs({ false, true }) do
            local outs = { raw2outputs(raw, z_vals, rd, 0, wb) }
            local want = REF["r2o_" .. tostring(wb)]
            local names = { "rgb_map", "disp_map", "acc_map", "weights", "depth_map" }
            local shapes = { { 2, 3 }, { 2 }, { 2 }, { 2, 8 }, { 2 } }
            for n = 1, 5 do
                assert.are.same(shapes[n], outs[n].shape)
                assert_close_list(want[n], flat(outs[n]), 1e-5, names[n])
            end
        end
        tide.manual_seed(2)
        local noisy = { raw2outputs(raw, z_vals, rd, 1.0, false) }
        local clean = { raw2outputs(raw, z_vals, rd, 0, false) }
        assert.is_false(tide.allclose(noisy[4], clean[4]))
        assert_finite(noisy[1]:sum():item(), "noisy rgb_map")
    end)
    it("render, render_rays, run_network and train()'s Adam steps against PyTorch", function()
        local args = { multires = 2, multires_views = 1, i_embed = 0, use_viewdirs = true,
            N_importance = 8, N_samples = 8, netdepth = 2, netwidth = 16, netdepth_fine = 2,
            netwidth_fine = 16, netchunk = 16, lrate = 5e-3, perturb = 0., white_bkgd = false,
            raw_noise_std = 0., lrate_decay = 250, dataset_type = "blender", no_ndc = true,
            lindisp = false }
        local rkt, _, _, grad_vars, optimizer = create_nerf(args)
        assert.are.equal(2 * (6 * 2), #grad_vars)
        -- Adam(params=grad_vars, lr=..., betas=...): every argument by name in one table
        assert.are.equal(#grad_vars, #optimizer.param_groups[1].params)
        assert.are.equal(5e-3, optimizer.param_groups[1].lr)
        assert.has_error(function() tide.optim.Adam({ params = {}, lr = 1e-3 }) end,
            "tide: Adam: optimizer got an empty parameter list")
        init_nerf(rkt['network_fn'], 0)
        init_nerf(rkt['network_fine'], 10)
        assert.is_false(rkt.ndc)
        local rays_o, rays_d = get_rays(H, W, K, tide.tensor(C2W))
        -- sel = [1, 6, 11]
        local sel = tide.tensor({ 2, 7, 12 })
        -- batch_rays = torch.stack([rays_o.reshape(-1, 3)[sel], rays_d.reshape(-1, 3)[sel]], 0)
        local batch_rays = tide.stack({ rays_o:reshape(-1, 3)[sel], rays_d:reshape(-1, 3)[sel] }, 1)
        -- target_s = (torch.arange(9.) / 9.).reshape(3, 3)
        local target_s = (tide.arange(9.) / 9.):reshape(3, 3)
        local function call_render()
            -- render(H, W, K, chunk=2, rays=batch_rays, retraw=True, near=2., far=6., **rkt)
            local opts = { chunk = 2, rays = batch_rays, retraw = true, near = 2., far = 6. }
            for k, v in pairs(rkt) do opts[k] = v end
            return render(H, W, K, opts)
        end
        local rgb, disp, acc, extras = call_render()
        assert.are.same({ 3, 3 }, rgb.shape)
        assert.are.same({ 3 }, disp.shape)
        assert.are.same({ 3, 16, 4 }, extras.raw.shape)
        local got = { flat(rgb), flat(disp), flat(acc), flat(extras['rgb0']),
            flat(extras['z_std']), flat(extras['raw'][{ 1, { 1, 2 } }]) }
        local names = { "rgb_map", "disp_map", "acc_map", "rgb0", "z_std", "raw" }
        for n = 1, 6 do
            assert_close_list(REF.render[n], got[n], 1e-4, names[n])
        end

        local losses, psnrs = {}, {}
        -- for global_step in range(3):  (Python's 0-based step)
        for global_step = 0, 2 do
            rgb, disp, acc, extras = call_render()
            optimizer:zero_grad()
            local img_loss = img2mse(rgb, target_s)
            local loss = img_loss
            local psnr = mse2psnr(img_loss)
            if extras['rgb0'] ~= nil then
                local img_loss0 = img2mse(extras['rgb0'], target_s)
                loss = loss + img_loss0
            end
            loss:backward()
            optimizer:step()
            -- decay_rate = 0.1; decay_steps = args.lrate_decay * 1000
            local decay_rate, decay_steps = 0.1, args.lrate_decay * 1000
            local new_lrate = args.lrate * (decay_rate ^ (global_step / decay_steps))
            for _, param_group in ipairs(optimizer.param_groups) do
                param_group['lr'] = new_lrate
            end
            losses[#losses + 1] = loss:item()
            psnrs[#psnrs + 1] = psnr:item()
        end
        assert_close_list(REF.losses, losses, 1e-3, "losses")
        assert_close_list(REF.psnrs, psnrs, 1e-3, "psnrs")
        assert.is_true(losses[3] < losses[1])
        assert.is_true(psnrs[3] > psnrs[1])
    end)

    it("a training step with perturb, raw_noise_std and white_bkgd: finite, the loss falls",
        function()
            tide.manual_seed(3)
            local args = { multires = 2, multires_views = 1, i_embed = 0, use_viewdirs = true,
                N_importance = 8, N_samples = 8, netdepth = 2, netwidth = 16, netdepth_fine = 2,
                netwidth_fine = 16, netchunk = 64, lrate = 1e-2, perturb = 1., white_bkgd = true,
                raw_noise_std = 1., lrate_decay = 250, dataset_type = "llff", no_ndc = false,
                lindisp = false }
            local rkt, rkte, _, _, optimizer = create_nerf(args)
            assert.are.equal(0., rkte.perturb)
            assert.is_nil(rkt.ndc)
            -- a random tiny image and its rays (NDC: llff's forward-facing default)
            local target = tide.rand(H, W, 3)
            local c2w = tide.eye(3, 4)
            local rays_o, rays_d = get_rays(H, W, K, c2w)
            local coords = tide.stack(tide.meshgrid(tide.linspace(0, H - 1, H),
                tide.linspace(0, W - 1, W)), -1)
            coords = tide.reshape(coords, { -1, 2 })
            local select_inds = tide.randperm(coords.shape[1])[{ { 1, 6 } }]
            -- select_coords = coords[select_inds].long()  (1-based: plus one)
            local select_coords = coords[select_inds]:long() + 1
            rays_o = rays_o[{ select_coords[{ {}, 1 }], select_coords[{ {}, 2 }] }]
            rays_d = rays_d[{ select_coords[{ {}, 1 }], select_coords[{ {}, 2 }] }]
            local batch_rays = tide.stack({ rays_o, rays_d }, 1)
            local target_s = target[{ select_coords[{ {}, 1 }], select_coords[{ {}, 2 }] }]
            assert.are.same({ 6, 3 }, target_s.shape)
            local losses = {}
            for step = 1, 3 do
                local opts = { chunk = 4, rays = batch_rays, retraw = true }
                for k, v in pairs(rkt) do opts[k] = v end
                local rgb, _, _, extras = render(H, W, K, opts)
                optimizer:zero_grad()
                local loss = img2mse(rgb, target_s) + img2mse(extras['rgb0'], target_s)
                loss:backward()
                optimizer:step()
                losses[step] = loss:item()
                assert_finite(losses[step], "loss")
                assert_finite(extras['z_std']:sum():item(), "z_std")
            end
            assert.is_true(losses[3] < losses[1])
        end)
end)
