-- ported_scripts136_spec.lua — self-supervised losses: facebookresearch/dino's main_dino.py
-- (DINOLoss: the center buffer, the teacher temperature schedule, the chunked student / teacher
-- cross-entropy skipping v == iq, update_center's EMA under @torch.no_grad; the teacher's EMA
-- update in train_one_epoch) and utils.py (MultiCropWrapper: crops grouped by resolution with
-- unique_consecutive's counts and cumsum), facebookresearch/swav's main_swav.py
-- (distributed_sinkhorn) and sthalles/SimCLR's simclr.py (info_nce_loss), ported line for line
-- at tiny sizes on inputs made by formulas. Single process: dist.all_reduce is left out and
-- world_size is 1. The Python line stands above each Lua line that differs from it.
-- Dims and class targets are 1-based; DINO's epoch stays 0-based (it counts, as in Python).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- 1. facebookresearch/dino main_dino.py DINOLoss, utils.py MultiCropWrapper
---------------------------------------------------------------------------------------------
-- class DINOLoss(nn.Module):
local DINOLoss = nn.Module:extend("DINOLoss")
-- def __init__(self, out_dim, ncrops, warmup_teacher_temp, teacher_temp,
--              warmup_teacher_temp_epochs, nepochs, student_temp=0.1,
--              center_momentum=0.9):
function DINOLoss:init(out_dim, ncrops, warmup_teacher_temp, teacher_temp,
                       warmup_teacher_temp_epochs, nepochs, student_temp, center_momentum)
    self.student_temp = student_temp or 0.1
    self.center_momentum = center_momentum or 0.9
    self.ncrops = ncrops
    -- self.register_buffer("center", torch.zeros(1, out_dim))
    self:register_buffer("center", tide.zeros(1, out_dim))
    -- we apply a warm up for the teacher temperature because
    -- a too high temperature makes the training instable at the beginning
    -- self.teacher_temp_schedule = np.concatenate((
    --     np.linspace(warmup_teacher_temp,
    --                 teacher_temp, warmup_teacher_temp_epochs),
    --     np.ones(nepochs - warmup_teacher_temp_epochs) * teacher_temp
    -- ))   (numpy's float64, as a float64 tensor)
    self.teacher_temp_schedule = tide.cat({
        tide.linspace(warmup_teacher_temp,
            teacher_temp, warmup_teacher_temp_epochs, { dtype = tide.float64 }),
        tide.ones(nepochs - warmup_teacher_temp_epochs, { dtype = tide.float64 }) * teacher_temp,
    })
end

-- def forward(self, student_output, teacher_output, epoch):
function DINOLoss:forward(student_output, teacher_output, epoch)
    -- Cross-entropy between softmax outputs of the teacher and student networks.
    local student_out = student_output / self.student_temp
    student_out = student_out:chunk(self.ncrops)

    -- teacher centering and sharpening
    -- temp = self.teacher_temp_schedule[epoch]   (a 0-dim float64 tensor: float32 stays)
    local temp = self.teacher_temp_schedule[epoch + 1]
    -- teacher_out = F.softmax((teacher_output - self.center) / temp, dim=-1)
    local teacher_out = F.softmax((teacher_output - self.center) / temp, -1)
    -- teacher_out = teacher_out.detach().chunk(2)
    teacher_out = teacher_out:detach():chunk(2)

    local total_loss = 0
    local n_loss_terms = 0
    -- for iq, q in enumerate(teacher_out):
    for iq, q in ipairs(teacher_out) do
        -- for v in range(len(student_out)):
        for v = 1, #student_out do
            -- if v == iq:
            --     # we skip cases where student and teacher operate on the same view
            --     continue   (no goto in Lua 5.1: the rest goes under the negated test)
            if v ~= iq then
                -- loss = torch.sum(-q * F.log_softmax(student_out[v], dim=-1), dim=-1)
                local loss = tide.sum(-q * F.log_softmax(student_out[v], -1), -1)
                -- total_loss += loss.mean()
                total_loss = total_loss + loss:mean()
                n_loss_terms = n_loss_terms + 1
            end
        end
    end
    -- total_loss /= n_loss_terms
    total_loss = total_loss / n_loss_terms
    self:update_center(teacher_output)
    return total_loss
end

-- @torch.no_grad()
-- def update_center(self, teacher_output):
DINOLoss.update_center = tide.no_grad()(function(self, teacher_output)
    -- Update center used for teacher output.
    -- batch_center = torch.sum(teacher_output, dim=0, keepdim=True)
    local batch_center = tide.sum(teacher_output, { dim = 1, keepdim = true })
    -- dist.all_reduce(batch_center)   (single process, world size 1: left out)
    -- batch_center = batch_center / (len(teacher_output) * dist.get_world_size())
    batch_center = batch_center / (#teacher_output * 1)

    -- ema update
    -- self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)
    self.center = self.center * self.center_momentum
        + batch_center * (1 - self.center_momentum)
end)

-- class MultiCropWrapper(nn.Module):
local MultiCropWrapper = nn.Module:extend("MultiCropWrapper")
-- def __init__(self, backbone, head):
function MultiCropWrapper:init(backbone, head)
    -- disable layers dedicated to ImageNet labels classification
    -- backbone.fc, backbone.head = nn.Identity(), nn.Identity()
    backbone.fc, backbone.head = nn.Identity(), nn.Identity()
    self.backbone = backbone
    self.head = head
end

-- def forward(self, x):
function MultiCropWrapper:forward(x)
    -- convert to list
    -- if not isinstance(x, list):
    if tide.is_tensor(x) then
        x = { x }
    end
    -- idx_crops = torch.cumsum(torch.unique_consecutive(
    --     torch.tensor([inp.shape[-1] for inp in x]),
    --     return_counts=True,
    -- )[1], 0)
    local widths = {}
    for i, inp in ipairs(x) do widths[i] = inp.shape[#inp.shape] end
    local _, counts = tide.unique_consecutive(tide.tensor(widths), { return_counts = true })
    local idx_crops = tide.cumsum(counts, 1)
    -- start_idx, output = 0, torch.empty(0).to(x[0].device)
    local start_idx, output = 0, tide.empty(0):to(x[1].device)
    -- for end_idx in idx_crops:
    for _, end_idx in ipairs(idx_crops:tolist()) do
        -- _out = self.backbone(torch.cat(x[start_idx: end_idx]))
        local _out = self.backbone(tide.cat({ unpack(x, start_idx + 1, end_idx) }))
        -- The output is a tuple with XCiT model. (a Lua table here)
        -- if isinstance(_out, tuple):
        if not tide.is_tensor(_out) then
            -- _out = _out[0]
            _out = _out[1]
        end
        -- accumulate outputs
        -- output = torch.cat((output, _out))
        output = tide.cat({ output, _out })
        start_idx = end_idx
    end
    -- Run the head forward on the concatenated features.
    return self.head(output)
end

---------------------------------------------------------------------------------------------
-- 2. facebookresearch/swav main_swav.py distributed_sinkhorn
---------------------------------------------------------------------------------------------
-- (args.epsilon, args.sinkhorn_iterations, args.world_size)
local args = { epsilon = 0.05, sinkhorn_iterations = 3, world_size = 1 }

-- @torch.no_grad()
-- def distributed_sinkhorn(out):
local distributed_sinkhorn = tide.no_grad()(function(out)
    -- Q = torch.exp(out / args.epsilon).t() # Q is K-by-B for consistency with notations
    local Q = tide.exp(out / args.epsilon):t()
    -- B = Q.shape[1] * args.world_size # number of samples to assign
    local B = Q.shape[2] * args.world_size
    -- K = Q.shape[0] # how many prototypes
    local K = Q.shape[1]

    -- make the matrix sums to 1
    local sum_Q = tide.sum(Q)
    -- dist.all_reduce(sum_Q)   (single process: left out)
    -- Q /= sum_Q
    Q:div_(sum_Q)

    -- for it in range(args.sinkhorn_iterations):
    for _ = 1, args.sinkhorn_iterations do
        -- normalize each row: total weight per prototype must be 1/K
        -- sum_of_rows = torch.sum(Q, dim=1, keepdim=True)
        local sum_of_rows = tide.sum(Q, { dim = 2, keepdim = true })
        -- dist.all_reduce(sum_of_rows)   (single process: left out)
        -- Q /= sum_of_rows
        Q:div_(sum_of_rows)
        -- Q /= K
        Q:div_(K)

        -- normalize each column: total weight per sample must be 1/B
        -- Q /= torch.sum(Q, dim=0, keepdim=True)
        Q:div_(tide.sum(Q, { dim = 1, keepdim = true }))
        -- Q /= B
        Q:div_(B)
    end

    -- Q *= B # the colomns must sum to 1 so that Q is an assignment
    Q:mul_(B)
    -- return Q.t()
    return Q:t()
end)

---------------------------------------------------------------------------------------------
-- 3. sthalles/SimCLR simclr.py info_nce_loss
---------------------------------------------------------------------------------------------
-- (self.args.batch_size, self.args.n_views, self.args.temperature, self.args.device)
local simclr_args = { batch_size = 3, n_views = 2, temperature = 0.07, device = "cpu" }

-- def info_nce_loss(self, features):
local function info_nce_loss(self, features)
    -- labels = torch.cat([torch.arange(self.args.batch_size) for i in range(self.args.n_views)],
    --                    dim=0)
    local views = {}
    for i = 1, self.args.n_views do views[i] = tide.arange(self.args.batch_size) end
    local labels = tide.cat(views, 1)
    -- labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
    labels = (labels:unsqueeze(1):eq(labels:unsqueeze(2))):float()
    -- labels = labels.to(self.args.device)
    labels = labels:to(self.args.device)

    -- features = F.normalize(features, dim=1)
    features = F.normalize(features, { dim = 2 })

    -- similarity_matrix = torch.matmul(features, features.T)
    local similarity_matrix = tide.matmul(features, features.T)

    -- discard the main diagonal from both: labels and similarities matrix
    -- mask = torch.eye(labels.shape[0], dtype=torch.bool).to(self.args.device)
    local mask = tide.eye(labels.shape[1], { dtype = tide.bool }):to(self.args.device)
    -- labels = labels[~mask].view(labels.shape[0], -1)   (~ is Lua 5.3+: logical_not)
    labels = labels[mask:logical_not()]:view(labels.shape[1], -1)
    -- similarity_matrix = similarity_matrix[~mask].view(similarity_matrix.shape[0], -1)
    similarity_matrix = similarity_matrix[mask:logical_not()]
        :view(similarity_matrix.shape[1], -1)

    -- select and combine multiple positives
    -- positives = similarity_matrix[labels.bool()].view(labels.shape[0], -1)
    local positives = similarity_matrix[labels:bool()]:view(labels.shape[1], -1)

    -- select only the negatives the negatives
    -- negatives = similarity_matrix[~labels.bool()].view(similarity_matrix.shape[0], -1)
    local negatives = similarity_matrix[labels:bool():logical_not()]
        :view(similarity_matrix.shape[1], -1)

    -- logits = torch.cat([positives, negatives], dim=1)
    local logits = tide.cat({ positives, negatives }, 2)
    -- labels = torch.zeros(logits.shape[0], dtype=torch.long).to(self.args.device)
    -- (class 0, the positive, is class 1 in tide)
    labels = tide.ones(logits.shape[1], { dtype = tide.long }):to(self.args.device)

    logits = logits / self.args.temperature
    return logits, labels
end

---------------------------------------------------------------------------------------------
-- the tiny backbone and the fixed inputs (the same formulas in the PyTorch reference)
---------------------------------------------------------------------------------------------
-- class TinyNet(nn.Module): conv 1->3, relu, global average pool, flatten, fc (replaced)
local TinyNet = nn.Module:extend("TinyNet")
function TinyNet:init()
    self.conv = nn.Conv2d(1, 3, 3, { padding = 1 })
    self.pool = nn.AdaptiveAvgPool2d(1)
    self.fc = nn.Linear(3, 10)
end
function TinyNet:forward(x)
    -- return self.fc(torch.flatten(self.pool(F.relu(self.conv(x))), 1))
    return self.fc(tide.flatten(self.pool(F.relu(self.conv(x))), 2))
end

-- p.copy_(((torch.arange(p.numel()) * 0.7 + i + k).sin() * 0.5).view(p.shape)), i 0-based
local function fill(model, k)
    tide.no_grad(function()
        for i, p in ipairs(model:parameters()) do
            p:copy_(((tide.arange(p:numel()) * 0.7 + (i - 1) + k):sin() * 0.5):view(p.shape))
        end
    end)
end

-- two global crops of 6x6 and two local crops of 4x4, batch 1 each
local function crops(s)
    local out = {}
    for j = 0, 1 do
        out[#out + 1] = (tide.arange(36.) * (0.3 + 0.1 * j) + s):sin():view(1, 1, 6, 6)
    end
    for j = 0, 1 do
        out[#out + 1] = (tide.arange(16.) * (0.5 + 0.1 * j) + s):cos():view(1, 1, 4, 4)
    end
    return out
end

local function flat(t)
    return t:detach():double():flatten():tolist()
end

describe("facebookresearch/dino DINOLoss and MultiCropWrapper", function()
    it("DINOLoss's schedule, loss and center EMA match PyTorch", function()
        local dl = DINOLoss(4, 4, 0.04, 0.07, 3, 5)
        assert_close_list({ 0.04, 0.055, 0.07, 0.07, 0.07 }, flat(dl.teacher_temp_schedule),
            1e-12, "teacher_temp_schedule")
        -- so = (torch.arange(1., 33.).view(8, 4) * 0.37).sin() * 2
        local so = (tide.arange(1., 33.):view(8, 4) * 0.37):sin() * 2
        -- to = (torch.arange(1., 17.).view(4, 4) * 0.53).cos()
        local to = (tide.arange(1., 17.):view(4, 4) * 0.53):cos()
        local loss1 = dl(so, to, 1)
        assert.are.equal("float32", loss1.dtype)
        assert_close_list({ 4.515173435 }, { loss1:item() }, 1e-5, "loss epoch 1")
        assert_close_list({ 0.021506814, 0.011611768, -0.001469388, -0.014147361 },
            flat(dl.center), 1e-5, "center")
        -- the reassigned center is still the module's buffer
        assert.is_true(tide.equal(dl.center, dl:state_dict()["center"]))
        assert.are.equal(1, #dl:buffers())
        assert.is_false(dl.center.requires_grad)
        local loss2 = dl(so, to, 4)
        assert_close_list({ 4.523367405 }, { loss2:item() }, 1e-5, "loss epoch 4")
        assert_close_list({ 0.040862948, 0.022062359, -0.002791837, -0.026879985 },
            flat(dl.center), 1e-5, "center")
    end)

    it("MultiCropWrapper runs each resolution through the backbone, then the head", function()
        local mc = MultiCropWrapper(TinyNet(), nn.Linear(3, 4))
        fill(mc, 0)
        local out = mc(crops(0.0))
        assert.are.same({ 4, 4 }, out.shape)
        assert_close_list({ 0.559312642, -1.369838119, 0.151075363, 0.009060621, 0.483342588,
            -1.19573164, 0.051251531, -0.064254522, 0.508957028, -1.248550415, 0.078967869,
            -0.039420635, 0.538809359, -1.316861272, 0.118088424, -0.010609537 },
            flat(out), 1e-5, "MultiCropWrapper output")
        -- the backbone's fc is nn.Identity now
        assert.are.equal("Identity", mc.backbone.fc.__name)
    end)

    it("two SGD steps of a student/teacher pair with DINOLoss and the teacher EMA", function()
        local student = MultiCropWrapper(TinyNet(), nn.Linear(3, 4))
        fill(student, 0)
        local teacher = MultiCropWrapper(TinyNet(), nn.Linear(3, 4))
        fill(teacher, 1)
        teacher:load_state_dict(student:state_dict())
        for _, p in ipairs(teacher:parameters()) do p.requires_grad = false end
        local dino_loss = DINOLoss(4, 4, 0.04, 0.07, 2, 3)
        local optimizer = optim.SGD(student:parameters(), { lr = 0.5 })
        local m = 0.9 -- momentum parameter
        local losses = {}
        for epoch = 0, 1 do
            local images = crops(epoch)
            -- teacher_output = teacher(images[:2])
            local teacher_output = teacher({ images[1], images[2] })
            local student_output = student(images)
            local loss = dino_loss(student_output, teacher_output, epoch)
            assert_finite(loss:item(), "loss")
            -- student update
            optimizer:zero_grad()
            loss:backward()
            optimizer:step()
            -- EMA update for the teacher
            -- with torch.no_grad():
            tide.no_grad(function()
                -- for param_q, param_k in zip(student.module.parameters(),
                --                             teacher_without_ddp.parameters()):
                local ps, pt = student:parameters(), teacher:parameters()
                for i = 1, #ps do
                    local param_q, param_k = ps[i], pt[i]
                    -- param_k.data.mul_(m).add_((1 - m) * param_q.detach().data)
                    param_k.data:mul_(m):add_((1 - m) * param_q:detach().data)
                end
            end)
            losses[#losses + 1] = loss:item()
        end
        assert_close_list({ 0.01859903, 0.027221626 }, losses, 1e-4, "losses")
        assert_close_list({ 0.467595547, 0.227460593, -0.11566411, -0.40913853, -0.49808228,
            -0.35277015, -0.05153317, 0.278592855, 0.474611998, 0.448127538, 0.202915549,
            -0.138638914 }, flat(teacher.head.weight), 1e-4, "teacher head weight")
        assert_close_list({ 0.105490714, -0.251437724, 0.02119041, -0.002365881 },
            flat(dino_loss.center), 1e-4, "center")
    end)
end)

describe("facebookresearch/swav distributed_sinkhorn", function()
    it("matches PyTorch and gives each sample an assignment summing to 1", function()
        -- out = (torch.arange(12.).view(4, 3) * 0.41).sin()
        local out = (tide.arange(12.):view(4, 3) * 0.41):sin()
        local Q = distributed_sinkhorn(out)
        assert.are.same({ 4, 3 }, Q.shape)
        assert_close_list({ 4.9e-08, 0.000938178, 0.999061823, 0.041868523, 0.83183229,
            0.126299217, 0.995265424, 0.004732557, 1.93e-06, 0.981995881, 0.01707077,
            0.000933355 }, flat(Q), 1e-5, "Q")
        assert_close_list({ 1, 1, 1, 1 }, flat(Q:sum(2)), 1e-5, "row sums")
    end)
end)

describe("sthalles/SimCLR info_nce_loss", function()
    it("logits, labels and their cross-entropy match PyTorch", function()
        -- feat = (torch.arange(30.).view(6, 5) * 0.29).cos()
        local feat = (tide.arange(30.):view(6, 5) * 0.29):cos()
        local logits, labels = info_nce_loss({ args = simclr_args }, feat)
        assert.are.same({ 6, 5 }, logits.shape)
        assert_close_list({ 2.957732677, -7.944084167, -14.177740097, 13.908904076, 4.599823475,
            -10.443554878, -7.944084167, 9.341072083, -13.260698318, 8.682993889, -2.905336618,
            -14.177740097, 9.341072083, -4.650475502, -14.203764915, 2.957732677,
            -13.260698318, -4.650475502, 6.068541527, -12.279503822, -10.443554878,
            13.908904076, -14.203764915, 6.068541527, 1.392630696, -2.905336618, 4.599823475,
            8.682993889, -12.279503822, 1.392630696 }, flat(logits), 1e-5, "logits")
        assert.are.equal("int64", labels.dtype)
        assert.are.same({ 1, 1, 1, 1, 1, 1 }, labels:tolist())
        local ce = F.cross_entropy(logits, labels)
        assert_close_list({ 13.752102852 }, { ce:item() }, 1e-5, "cross_entropy")
    end)
end)
