-- ported_scripts149_spec.lua — facebookresearch/pytorch3d's rotation maths at HEAD (9381c40):
-- pytorch3d/transforms/rotation_conversions.py (quaternion_to_matrix, _copysign,
-- _sqrt_positive_part, matrix_to_quaternion, _axis_angle_rotation, euler_angles_to_matrix,
-- _angle_from_tan, _index_from_letter, matrix_to_euler_angles, random_quaternions,
-- random_rotations, random_rotation, standardize_quaternion, quaternion_raw_multiply,
-- quaternion_multiply, quaternion_invert, quaternion_apply, axis_angle_to_matrix and
-- matrix_to_axis_angle (both with `fast`), axis_angle_to_quaternion, quaternion_to_axis_angle,
-- rotation_6d_to_matrix, matrix_to_rotation_6d), pytorch3d/transforms/so3.py
-- (so3_relative_angle, so3_rotation_angle, so3_exp_map, _so3_exp_map, so3_log_map, hat_inv,
-- hat) and the acos_linear_extrapolation that so3_rotation_angle calls from
-- pytorch3d/transforms/math.py, ported line for line. At HEAD matrix_to_quaternion picks its
-- candidate with argmax + gather (no longer F.one_hot(...) > 0.5 and a reshape), and
-- quaternion_to_axis_angle has no small-angle branch any more (one torch.sinc formula).
-- Values are PyTorch 1.13's, float64, on three rotations: a generic one, one near the identity
-- and one of angle pi - 1e-3. The Python line stands above each Lua line that differs from it;
-- indices are 1-based, so [..., 0] is [{"...", 1}].
local tide = require("tide")
local F = tide.nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

-- Python's shape tuple + tuple
local function cat_shape(a, b)
    local s = {}
    for _, v in ipairs(a) do s[#s + 1] = v end
    for _, v in ipairs(b) do s[#s + 1] = v end
    return s
end

-- shape[:-k]
local function shape_head(t, k)
    local s = {}
    for i = 1, t.ndim - k do s[i] = t:size(i) end
    return s
end

local function flat(t)
    return t:detach():contiguous():view(-1):tolist()
end

---------------------------------------------------------------------------------------------
-- pytorch3d/transforms/math.py
---------------------------------------------------------------------------------------------
local function _dacos_dx(x)
    return (-1.0) / math.sqrt(1.0 - x * x)
end

local function _acos_linear_approximation(x, x0)
    return (x - x0) * _dacos_dx(x0) + math.acos(x0)
end

-- def acos_linear_extrapolation(x, bounds=(-DEFAULT_ACOS_BOUND, DEFAULT_ACOS_BOUND)):
local function acos_linear_extrapolation(x, bounds)
    -- lower_bound, upper_bound = bounds
    local lower_bound, upper_bound = bounds[1], bounds[2]
    if lower_bound > upper_bound then
        error("lower bound has to be smaller or equal to upper bound.")
    end
    if lower_bound <= -1.0 or upper_bound >= 1.0 then
        error("Both lower bound and upper bound have to be within (-1, 1).")
    end
    local acos_extrap = tide.empty_like(x)
    -- x_upper = x >= upper_bound
    local x_upper = x:ge(upper_bound)
    -- x_lower = x <= lower_bound
    local x_lower = x:le(lower_bound)
    -- x_mid = (~x_upper) & (~x_lower)
    local x_mid = x_upper:logical_not():logical_and(x_lower:logical_not())
    acos_extrap[x_mid] = tide.acos(x[x_mid])
    acos_extrap[x_upper] = _acos_linear_approximation(x[x_upper], upper_bound)
    acos_extrap[x_lower] = _acos_linear_approximation(x[x_lower], lower_bound)
    return acos_extrap
end

---------------------------------------------------------------------------------------------
-- pytorch3d/transforms/rotation_conversions.py
---------------------------------------------------------------------------------------------
local standardize_quaternion, axis_angle_to_quaternion, quaternion_to_axis_angle

-- def quaternion_to_matrix(quaternions: torch.Tensor) -> torch.Tensor:
local function quaternion_to_matrix(quaternions)
    -- r, i, j, k = torch.unbind(quaternions, -1)
    local r, i, j, k = unpack(tide.unbind(quaternions, -1))
    local two_s = tide.div(2.0, (quaternions * quaternions):sum(-1))
    local o = tide.stack({
        1 - two_s * (j * j + k * k),
        two_s * (i * j - k * r),
        two_s * (i * k + j * r),
        two_s * (i * j + k * r),
        1 - two_s * (i * i + k * k),
        two_s * (j * k - i * r),
        two_s * (i * k - j * r),
        two_s * (j * k + i * r),
        1 - two_s * (i * i + j * j),
    }, -1)
    -- return o.reshape(quaternions.shape[:-1] + (3, 3))
    return o:reshape(cat_shape(shape_head(quaternions, 1), { 3, 3 }))
end

-- def _copysign(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
local function _copysign(a, b)
    -- signs_differ = (a < 0) != (b < 0)
    local signs_differ = a:lt(0):ne(b:lt(0))
    return tide.where(signs_differ, -a, a)
end

-- def _sqrt_positive_part(x: torch.Tensor) -> torch.Tensor:
local function _sqrt_positive_part(x)
    -- positive_mask = x > 0
    local positive_mask = x:gt(0)
    local safe_x = tide.where(positive_mask, x, 1.0)
    return tide.where(positive_mask, tide.sqrt(safe_x), 0.0)
end

-- def matrix_to_quaternion(matrix: torch.Tensor) -> torch.Tensor:
local function matrix_to_quaternion(matrix)
    if matrix:size(-1) ~= 3 or matrix:size(-2) ~= 3 then
        error(string.format("Invalid rotation matrix shape %s.", tostring(matrix.shape)))
    end
    -- batch_dim = matrix.shape[:-2]
    local batch_dim = shape_head(matrix, 2)
    -- m00, m01, m02, m10, m11, m12, m20, m21, m22 = torch.unbind(
    --     matrix.reshape(batch_dim + (9,)), dim=-1
    -- )
    local m00, m01, m02, m10, m11, m12, m20, m21, m22 = unpack(tide.unbind(
        matrix:reshape(cat_shape(batch_dim, { 9 })), -1))
    local q_abs = _sqrt_positive_part(tide.stack({
        1.0 + m00 + m11 + m22,
        1.0 + m00 - m11 - m22,
        1.0 - m00 + m11 - m22,
        1.0 - m00 - m11 + m22,
    }, -1))
    -- quat_by_rijk = torch.stack([torch.stack([torch.square(q_abs[..., 0]), ...
    local quat_by_rijk = tide.stack({
        tide.stack({ tide.square(q_abs[{ "...", 1 }]), m21 - m12, m02 - m20, m10 - m01 }, -1),
        tide.stack({ m21 - m12, tide.square(q_abs[{ "...", 2 }]), m10 + m01, m02 + m20 }, -1),
        tide.stack({ m02 - m20, m10 + m01, tide.square(q_abs[{ "...", 3 }]), m12 + m21 }, -1),
        tide.stack({ m10 - m01, m20 + m02, m21 + m12, tide.square(q_abs[{ "...", 4 }]) }, -1),
    }, -2)
    -- flr = torch.tensor(0.1).to(dtype=q_abs.dtype, device=q_abs.device)
    local flr = tide.tensor(0.1):to({ dtype = q_abs.dtype, device = q_abs.device })
    -- quat_candidates = quat_by_rijk / (2.0 * q_abs[..., None].max(flr))
    local quat_candidates = quat_by_rijk / (2.0 * q_abs[{ "...", tide.newaxis }]:max(flr))
    -- indices = q_abs.argmax(dim=-1, keepdim=True)
    local indices = q_abs:argmax({ dim = -1, keepdim = true })
    -- expand_dims = list(batch_dim) + [1, 4]
    local expand_dims = cat_shape(batch_dim, { 1, 4 })
    -- gather_indices = indices.unsqueeze(-1).expand(expand_dims)
    local gather_indices = indices:unsqueeze(-1):expand(expand_dims)
    -- out = torch.gather(quat_candidates, -2, gather_indices).squeeze(-2)
    local out = tide.gather(quat_candidates, -2, gather_indices):squeeze(-2)
    return standardize_quaternion(out)
end

-- def _axis_angle_rotation(axis: str, angle: torch.Tensor) -> torch.Tensor:
local function _axis_angle_rotation(axis, angle)
    local cos = tide.cos(angle)
    local sin = tide.sin(angle)
    local one = tide.ones_like(angle)
    local zero = tide.zeros_like(angle)
    local R_flat
    if axis == "X" then
        R_flat = { one, zero, zero, zero, cos, -sin, zero, sin, cos }
    elseif axis == "Y" then
        R_flat = { cos, zero, sin, zero, one, zero, -sin, zero, cos }
    elseif axis == "Z" then
        R_flat = { cos, -sin, zero, sin, cos, zero, zero, zero, one }
    else
        error("letter must be either X, Y or Z.")
    end
    -- return torch.stack(R_flat, -1).reshape(angle.shape + (3, 3))
    return tide.stack(R_flat, -1):reshape(cat_shape(angle.shape, { 3, 3 }))
end

-- Python's `for letter in convention` checks, shared by both Euler functions
local function check_convention(convention)
    if #convention ~= 3 then
        error("Convention must have 3 letters.")
    end
    -- if convention[1] in (convention[0], convention[2]):
    local c1, c2, c3 = convention:sub(1, 1), convention:sub(2, 2), convention:sub(3, 3)
    if c2 == c1 or c2 == c3 then
        error(string.format("Invalid convention %s.", convention))
    end
    for letter in convention:gmatch(".") do
        if letter ~= "X" and letter ~= "Y" and letter ~= "Z" then
            error(string.format("Invalid letter %s in convention string.", letter))
        end
    end
    return c1, c2, c3
end

-- def euler_angles_to_matrix(euler_angles: torch.Tensor, convention: str) -> torch.Tensor:
local function euler_angles_to_matrix(euler_angles, convention)
    -- if euler_angles.dim() == 0 or euler_angles.shape[-1] != 3:
    if euler_angles:dim() == 0 or euler_angles:size(-1) ~= 3 then
        error("Invalid input euler angles.")
    end
    local letters = { check_convention(convention) }
    -- matrices = [_axis_angle_rotation(c, e)
    --     for c, e in zip(convention, torch.unbind(euler_angles, -1))]
    local matrices = {}
    for n, e in ipairs(tide.unbind(euler_angles, -1)) do
        matrices[n] = _axis_angle_rotation(letters[n], e)
    end
    -- return torch.matmul(torch.matmul(matrices[0], matrices[1]), matrices[2])
    return tide.matmul(tide.matmul(matrices[1], matrices[2]), matrices[3])
end

-- def _angle_from_tan(axis, other_axis, data, horizontal, tait_bryan):
local function _angle_from_tan(axis, other_axis, data, horizontal, tait_bryan)
    -- i1, i2 = {"X": (2, 1), "Y": (0, 2), "Z": (1, 0)}[axis]
    local i1, i2 = unpack(({ X = { 3, 2 }, Y = { 1, 3 }, Z = { 2, 1 } })[axis])
    if horizontal then
        i2, i1 = i1, i2
    end
    -- even = (axis + other_axis) in ["XY", "YZ", "ZX"]
    local pair = axis .. other_axis
    local even = pair == "XY" or pair == "YZ" or pair == "ZX"
    if horizontal == even then
        -- return torch.atan2(data[..., i1], data[..., i2])
        return tide.atan2(data[{ "...", i1 }], data[{ "...", i2 }])
    end
    if tait_bryan then
        return tide.atan2(-data[{ "...", i2 }], data[{ "...", i1 }])
    end
    return tide.atan2(data[{ "...", i2 }], -data[{ "...", i1 }])
end

-- def _index_from_letter(letter: str) -> int:  (1-based here)
local function _index_from_letter(letter)
    if letter == "X" then return 1 end
    if letter == "Y" then return 2 end
    if letter == "Z" then return 3 end
    error("letter must be either X, Y or Z.")
end

-- def matrix_to_euler_angles(matrix: torch.Tensor, convention: str) -> torch.Tensor:
local function matrix_to_euler_angles(matrix, convention)
    local c1, c2, c3 = check_convention(convention)
    if matrix:size(-1) ~= 3 or matrix:size(-2) ~= 3 then
        error(string.format("Invalid rotation matrix shape %s.", tostring(matrix.shape)))
    end
    local i0 = _index_from_letter(c1)
    local i2 = _index_from_letter(c3)
    local tait_bryan = i0 ~= i2
    local central_angle
    if tait_bryan then
        -- central_angle = torch.asin(torch.clamp(matrix[..., i0, i2], -1.0, 1.0)
        --     * (-1.0 if i0 - i2 in [-1, 2] else 1.0))
        central_angle = tide.asin(tide.clamp(matrix[{ "...", i0, i2 }], -1.0, 1.0)
            * ((i0 - i2 == -1 or i0 - i2 == 2) and -1.0 or 1.0))
    else
        -- central_angle = torch.acos(torch.clamp(matrix[..., i0, i0], -1.0, 1.0))
        central_angle = tide.acos(tide.clamp(matrix[{ "...", i0, i0 }], -1.0, 1.0))
    end
    local o = {
        -- _angle_from_tan(convention[0], convention[1], matrix[..., i2], False, tait_bryan),
        _angle_from_tan(c1, c2, matrix[{ "...", i2 }], false, tait_bryan),
        central_angle,
        -- _angle_from_tan(convention[2], convention[1], matrix[..., i0, :], True, tait_bryan),
        _angle_from_tan(c3, c2, matrix[{ "...", i0, {} }], true, tait_bryan),
    }
    return tide.stack(o, -1)
end

-- def random_quaternions(n: int, dtype=None, device=None) -> torch.Tensor:
local function random_quaternions(n, dtype, device)
    -- o = torch.randn((n, 4), dtype=dtype, device=device)
    local o = tide.randn({ n, 4 }, { dtype = dtype, device = device })
    -- s = (o * o).sum(1)
    local s = (o * o):sum(2)
    -- o = o / _copysign(torch.sqrt(s), o[:, 0])[:, None]
    o = o / _copysign(tide.sqrt(s), o[{ {}, 1 }])[{ {}, tide.newaxis }]
    return o
end

-- def random_rotations(n: int, dtype=None, device=None) -> torch.Tensor:
local function random_rotations(n, dtype, device)
    local quaternions = random_quaternions(n, dtype, device)
    return quaternion_to_matrix(quaternions)
end

-- def random_rotation(dtype=None, device=None) -> torch.Tensor:
local function random_rotation(dtype, device)
    -- return random_rotations(1, dtype, device)[0]
    return random_rotations(1, dtype, device)[1]
end

-- def standardize_quaternion(quaternions: torch.Tensor) -> torch.Tensor:
function standardize_quaternion(quaternions)
    -- return torch.where(quaternions[..., 0:1] < 0, -quaternions, quaternions)
    return tide.where(quaternions[{ "...", { 1, 1 } }]:lt(0), -quaternions, quaternions)
end

-- def quaternion_raw_multiply(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
local function quaternion_raw_multiply(a, b)
    -- aw, ax, ay, az = torch.unbind(a, -1)
    local aw, ax, ay, az = unpack(tide.unbind(a, -1))
    local bw, bx, by, bz = unpack(tide.unbind(b, -1))
    local ow = aw * bw - ax * bx - ay * by - az * bz
    local ox = aw * bx + ax * bw + ay * bz - az * by
    local oy = aw * by - ax * bz + ay * bw + az * bx
    local oz = aw * bz + ax * by - ay * bx + az * bw
    return tide.stack({ ow, ox, oy, oz }, -1)
end

-- def quaternion_multiply(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
local function quaternion_multiply(a, b)
    local ab = quaternion_raw_multiply(a, b)
    return standardize_quaternion(ab)
end

-- def quaternion_invert(quaternion: torch.Tensor) -> torch.Tensor:
local function quaternion_invert(quaternion)
    -- scaling = torch.tensor([1, -1, -1, -1], device=quaternion.device)
    local scaling = tide.tensor({ 1, -1, -1, -1 }, { device = quaternion.device })
    return quaternion * scaling
end

-- def quaternion_apply(quaternion: torch.Tensor, point: torch.Tensor) -> torch.Tensor:
local function quaternion_apply(quaternion, point)
    if point:size(-1) ~= 3 then
        error(string.format("Points are not in 3D, %s.", tostring(point.shape)))
    end
    -- real_parts = point.new_zeros(point.shape[:-1] + (1,))
    local real_parts = point:new_zeros(cat_shape(shape_head(point, 1), { 1 }))
    -- point_as_quaternion = torch.cat((real_parts, point), -1)
    local point_as_quaternion = tide.cat({ real_parts, point }, -1)
    local out = quaternion_raw_multiply(
        quaternion_raw_multiply(quaternion, point_as_quaternion),
        quaternion_invert(quaternion))
    -- return out[..., 1:]
    return out[{ "...", { 2, -1 } }]
end

-- def axis_angle_to_matrix(axis_angle: torch.Tensor, fast: bool = False) -> torch.Tensor:
local function axis_angle_to_matrix(axis_angle, fast)
    if not fast then
        return quaternion_to_matrix(axis_angle_to_quaternion(axis_angle))
    end
    local shape = axis_angle.shape
    local device, dtype = axis_angle.device, axis_angle.dtype
    -- angles = torch.norm(axis_angle, p=2, dim=-1, keepdim=True).unsqueeze(-1)
    local angles = tide.norm(axis_angle, { p = 2, dim = -1, keepdim = true }):unsqueeze(-1)
    -- rx, ry, rz = axis_angle[..., 0], axis_angle[..., 1], axis_angle[..., 2]
    local rx, ry, rz = axis_angle[{ "...", 1 }], axis_angle[{ "...", 2 }],
        axis_angle[{ "...", 3 }]
    -- zeros = torch.zeros(shape[:-1], dtype=dtype, device=device)
    local zeros = tide.zeros(shape_head(axis_angle, 1), { dtype = dtype, device = device })
    -- cross_product_matrix = torch.stack(
    --     [zeros, -rz, ry, rz, zeros, -rx, -ry, rx, zeros], dim=-1
    -- ).view(shape + (3,))
    local cross_product_matrix = tide.stack(
        { zeros, -rz, ry, rz, zeros, -rx, -ry, rx, zeros }, -1
    ):view(cat_shape(shape, { 3 }))
    -- cross_product_matrix_sqrd = cross_product_matrix @ cross_product_matrix
    local cross_product_matrix_sqrd = cross_product_matrix:matmul(cross_product_matrix)
    local identity = tide.eye(3, { dtype = dtype, device = device })
    local angles_sqrd = angles * angles
    -- angles_sqrd = torch.where(angles_sqrd == 0, 1, angles_sqrd)
    angles_sqrd = tide.where(angles_sqrd:eq(0), 1, angles_sqrd)
    return identity:expand(cross_product_matrix.shape)
        + tide.sinc(angles / math.pi) * cross_product_matrix
        + ((1 - tide.cos(angles)) / angles_sqrd) * cross_product_matrix_sqrd
end

-- def matrix_to_axis_angle(matrix: torch.Tensor, fast: bool = False) -> torch.Tensor:
local function matrix_to_axis_angle(matrix, fast)
    if not fast then
        return quaternion_to_axis_angle(matrix_to_quaternion(matrix))
    end
    if matrix:size(-1) ~= 3 or matrix:size(-2) ~= 3 then
        error(string.format("Invalid rotation matrix shape %s.", tostring(matrix.shape)))
    end
    -- omegas = torch.stack([matrix[..., 2, 1] - matrix[..., 1, 2], ...], dim=-1)
    local omegas = tide.stack({
        matrix[{ "...", 3, 2 }] - matrix[{ "...", 2, 3 }],
        matrix[{ "...", 1, 3 }] - matrix[{ "...", 3, 1 }],
        matrix[{ "...", 2, 1 }] - matrix[{ "...", 1, 2 }],
    }, -1)
    local norms = tide.norm(omegas, { p = 2, dim = -1, keepdim = true })
    -- traces = torch.diagonal(matrix, dim1=-2, dim2=-1).sum(-1).unsqueeze(-1)
    local traces = tide.diagonal(matrix, { dim1 = -2, dim2 = -1 }):sum(-1):unsqueeze(-1)
    local angles = tide.atan2(norms, traces - 1)
    local zeros = tide.zeros(3, { dtype = matrix.dtype, device = matrix.device })
    -- omegas = torch.where(torch.isclose(angles, torch.zeros_like(angles)), zeros, omegas)
    omegas = tide.where(tide.isclose(angles, tide.zeros_like(angles)), zeros, omegas)
    -- near_pi = angles.isclose(angles.new_full((1,), torch.pi)).squeeze(-1)
    local near_pi = angles:isclose(angles:new_full({ 1 }, math.pi)):squeeze(-1)
    local not_near_pi = near_pi:logical_not()
    local axis_angles = tide.empty_like(omegas)
    -- axis_angles[~near_pi] = (
    --     0.5 * omegas[~near_pi] / torch.sinc(angles[~near_pi] / torch.pi))
    axis_angles[not_near_pi] = 0.5 * omegas[not_near_pi]
        / tide.sinc(angles[not_near_pi] / math.pi)
    -- n = 0.5 * (matrix[near_pi][..., 0, :]
    --     + torch.eye(1, 3, dtype=matrix.dtype, device=matrix.device))
    local n = 0.5 * (matrix[near_pi][{ "...", 1, {} }]
        + tide.eye(1, 3, { dtype = matrix.dtype, device = matrix.device }))
    -- axis_angles[near_pi] = angles[near_pi] * n / torch.norm(n)
    axis_angles[near_pi] = angles[near_pi] * n / tide.norm(n)
    return axis_angles
end

-- def axis_angle_to_quaternion(axis_angle: torch.Tensor) -> torch.Tensor:
function axis_angle_to_quaternion(axis_angle)
    -- angles = torch.norm(axis_angle, p=2, dim=-1, keepdim=True)
    local angles = tide.norm(axis_angle, { p = 2, dim = -1, keepdim = true })
    -- sin_half_angles_over_angles = 0.5 * torch.sinc(angles * 0.5 / torch.pi)
    local sin_half_angles_over_angles = 0.5 * tide.sinc(angles * 0.5 / math.pi)
    -- return torch.cat(
    --     [torch.cos(angles * 0.5), axis_angle * sin_half_angles_over_angles], dim=-1)
    return tide.cat(
        { tide.cos(angles * 0.5), axis_angle * sin_half_angles_over_angles }, -1)
end

-- def quaternion_to_axis_angle(quaternions: torch.Tensor) -> torch.Tensor:
function quaternion_to_axis_angle(quaternions)
    -- norms = torch.norm(quaternions[..., 1:], p=2, dim=-1, keepdim=True)
    local norms = tide.norm(quaternions[{ "...", { 2, -1 } }], { p = 2, dim = -1, keepdim = true })
    -- half_angles = torch.atan2(norms, quaternions[..., :1])
    local half_angles = tide.atan2(norms, quaternions[{ "...", { 1, 1 } }])
    -- sin_half_angles_over_angles = 0.5 * torch.sinc(half_angles / torch.pi)
    local sin_half_angles_over_angles = 0.5 * tide.sinc(half_angles / math.pi)
    -- return quaternions[..., 1:] / sin_half_angles_over_angles
    return quaternions[{ "...", { 2, -1 } }] / sin_half_angles_over_angles
end

-- def rotation_6d_to_matrix(d6: torch.Tensor) -> torch.Tensor:
local function rotation_6d_to_matrix(d6)
    -- a1, a2 = d6[..., :3], d6[..., 3:]
    local a1, a2 = d6[{ "...", { 1, 3 } }], d6[{ "...", { 4, -1 } }]
    -- b1 = F.normalize(a1, dim=-1)
    local b1 = F.normalize(a1, { dim = -1 })
    -- b2 = a2 - (b1 * a2).sum(-1, keepdim=True) * b1
    local b2 = a2 - (b1 * a2):sum(-1, true) * b1
    b2 = F.normalize(b2, { dim = -1 })
    -- b3 = torch.cross(b1, b2, dim=-1)
    local b3 = tide.cross(b1, b2, { dim = -1 })
    -- return torch.stack((b1, b2, b3), dim=-2)
    return tide.stack({ b1, b2, b3 }, -2)
end

-- def matrix_to_rotation_6d(matrix: torch.Tensor) -> torch.Tensor:
local function matrix_to_rotation_6d(matrix)
    -- batch_dim = matrix.size()[:-2]
    local batch_dim = shape_head(matrix, 2)
    -- return matrix[..., :2, :].clone().reshape(batch_dim + (6,))
    return matrix[{ "...", { 1, 2 }, {} }]:clone():reshape(cat_shape(batch_dim, { 6 }))
end

---------------------------------------------------------------------------------------------
-- pytorch3d/transforms/so3.py
---------------------------------------------------------------------------------------------
local so3_rotation_angle, hat

-- def so3_relative_angle(R1, R2, cos_angle=False, cos_bound=1e-4, eps=1e-4):
local function so3_relative_angle(R1, R2, opts)
    opts = opts or {}
    -- R12 = torch.bmm(R1, R2.permute(0, 2, 1))
    local R12 = tide.bmm(R1, R2:permute(1, 3, 2))
    -- return so3_rotation_angle(R12, cos_angle=cos_angle, cos_bound=cos_bound, eps=eps)
    return so3_rotation_angle(R12, { cos_angle = opts.cos_angle, cos_bound = opts.cos_bound,
        eps = opts.eps })
end

-- def so3_rotation_angle(R, eps=1e-4, cos_angle=False, cos_bound=1e-4):
function so3_rotation_angle(R, opts)
    opts = opts or {}
    local eps, cos_angle, cos_bound = opts.eps or 1e-4, opts.cos_angle, opts.cos_bound or 1e-4
    -- N, dim1, dim2 = R.shape
    local _, dim1, dim2 = unpack(R.shape)
    if dim1 ~= 3 or dim2 ~= 3 then
        error("Input has to be a batch of 3x3 Tensors.")
    end
    -- rot_trace = R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2]
    local rot_trace = R[{ {}, 1, 1 }] + R[{ {}, 2, 2 }] + R[{ {}, 3, 3 }]
    -- if ((rot_trace < -1.0 - eps) + (rot_trace > 3.0 + eps)).any():
    if (rot_trace:lt(-1.0 - eps) + rot_trace:gt(3.0 + eps)):any():item() then
        error("A matrix has trace outside valid range [-1-eps,3+eps].")
    end
    local phi_cos = (rot_trace - 1.0) * 0.5
    if cos_angle then
        return phi_cos
    else
        if cos_bound > 0.0 then
            local bound = 1.0 - cos_bound
            -- return acos_linear_extrapolation(phi_cos, (-bound, bound))
            return acos_linear_extrapolation(phi_cos, { -bound, bound })
        else
            return tide.acos(phi_cos)
        end
    end
end

-- def _so3_exp_map(log_rot, eps=0.0001) -> Tuple[...]:
local function _so3_exp_map(log_rot, eps)
    eps = eps or 0.0001
    -- _, dim = log_rot.shape
    local _, dim = unpack(log_rot.shape)
    if dim ~= 3 then
        error("Input tensor shape has to be Nx3.")
    end
    -- nrms = (log_rot * log_rot).sum(1)
    local nrms = (log_rot * log_rot):sum(2)
    -- rot_angles = torch.clamp(nrms, eps).sqrt()
    local rot_angles = tide.clamp(nrms, eps):sqrt()
    local skews = hat(log_rot)
    local skews_square = tide.bmm(skews, skews)
    -- R = rotation_conversions.axis_angle_to_matrix(log_rot)
    local R = axis_angle_to_matrix(log_rot)
    return R, rot_angles, skews, skews_square
end

-- def so3_exp_map(log_rot: torch.Tensor, eps: float = 0.0001) -> torch.Tensor:
local function so3_exp_map(log_rot, eps)
    -- return _so3_exp_map(log_rot, eps=eps)[0]
    return (_so3_exp_map(log_rot, eps))
end

-- def so3_log_map(R, eps=0.0001, cos_bound=1e-4) -> torch.Tensor:
local function so3_log_map(R)
    -- N, dim1, dim2 = R.shape
    local _, dim1, dim2 = unpack(R.shape)
    if dim1 ~= 3 or dim2 ~= 3 then
        error("Input has to be a batch of 3x3 Tensors.")
    end
    return matrix_to_axis_angle(R)
end

-- def hat_inv(h: torch.Tensor) -> torch.Tensor:
local function hat_inv(h)
    local _, dim1, dim2 = unpack(h.shape)
    if dim1 ~= 3 or dim2 ~= 3 then
        error("Input has to be a batch of 3x3 Tensors.")
    end
    -- ss_diff = torch.abs(h + h.permute(0, 2, 1)).max()
    local ss_diff = tide.abs(h + h:permute(1, 3, 2)):max()
    local HAT_INV_SKEW_SYMMETRIC_TOL = 1e-5
    -- if float(ss_diff) > HAT_INV_SKEW_SYMMETRIC_TOL:
    if ss_diff:item() > HAT_INV_SKEW_SYMMETRIC_TOL then
        error("One of input matrices is not skew-symmetric.")
    end
    -- x = h[:, 2, 1]; y = h[:, 0, 2]; z = h[:, 1, 0]
    local x = h[{ {}, 3, 2 }]
    local y = h[{ {}, 1, 3 }]
    local z = h[{ {}, 2, 1 }]
    -- v = torch.stack((x, y, z), dim=1)
    local v = tide.stack({ x, y, z }, 2)
    return v
end

-- def hat(v: torch.Tensor) -> torch.Tensor:
function hat(v)
    -- N, dim = v.shape
    local N, dim = unpack(v.shape)
    if dim ~= 3 then
        error("Input vectors have to be 3-dimensional.")
    end
    -- h = torch.zeros((N, 3, 3), dtype=v.dtype, device=v.device)
    local h = tide.zeros({ N, 3, 3 }, { dtype = v.dtype, device = v.device })
    -- x, y, z = v.unbind(1)
    local x, y, z = unpack(v:unbind(2))
    -- h[:, 0, 1] = -z
    h[{ {}, 1, 2 }] = -z
    h[{ {}, 1, 3 }] = y
    h[{ {}, 2, 1 }] = z
    h[{ {}, 2, 3 }] = -x
    h[{ {}, 3, 1 }] = -y
    h[{ {}, 3, 2 }] = x
    return h
end

---------------------------------------------------------------------------------------------
-- checks against PyTorch 1.13
---------------------------------------------------------------------------------------------
-- PyTorch 1.13 float64 values of the tests below (/tmp script: the pytorch3d files + inputs)
local want = {
    R = {
        0.590175056325361, -0.744660239601575, -0.311728295872995, 0.606517000160686,
        0.663851450693836, -0.43753671837661, 0.532757478978418, 0.069154746534238,
        0.843437661966992, 0.999999975, 0.000100009999, 0.000199994998, -9.9989999e-05,
        0.99999999, -0.000100009999, -0.000200004998, 9.9989999e-05, 0.999999975,
        -0.777777333333371, 0.443777666777787, 0.445110999888898, 0.445110999888898,
        -0.111110833333357, 0.888555333388908, 0.443777666777787, 0.889221999944463,
        -0.111110833333357 },
    Rfast = {
        0.590175056325361, -0.744660239601575, -0.311728295872995, 0.606517000160686,
        0.663851450693836, -0.43753671837661, 0.532757478978418, 0.069154746534238,
        0.843437661966992, 0.999999975, 0.000100009999, 0.000199994998, -9.9989999e-05,
        0.99999999, -0.000100009999, -0.000200004998, 9.9989999e-05, 0.999999975,
        -0.77777733333337, 0.443777666777787, 0.445110999888898, 0.445110999888898,
        -0.111110833333356, 0.888555333388907, 0.443777666777787, 0.889221999944463,
        -0.111110833333356 },
    q = {
        0.879980705610383, 0.143949595053732, -0.23991599175622, 0.383865586809952,
        0.9999999925, 4.9999999875e-05, 9.999999975e-05, -4.9999999875e-05,
        0.000499999979167, 0.333333291666668, 0.666666583333335, 0.666666583333335 },
    q2m = {
        0.545454545454545, -0.763636363636364, -0.345454545454545, 0.545454545454546,
        0.636363636363636, -0.545454545454546, 0.636363636363636, 0.109090909090909,
        0.763636363636364 },
    aa = {
        0.3, -0.5, 0.8, 0.0001, 0.0002, -0.0001, 1.046864217863264, 2.093728435726529,
        2.093728435726529 },
    aafast = {
        0.3, -0.5, 0.8, 0.0001, 0.0002, -0.0001, 1.046864217863113, 2.093728435726575,
        2.093728435726575 },
    aa2q = {
        0.879980705610383, 0.143949595053732, -0.23991599175622, 0.383865586809952,
        0.9999999925, 4.9999999875e-05, 9.999999975e-05, -4.9999999875e-05,
        0.000499999979167, 0.333333291666667, 0.666666583333335, 0.666666583333335 },
    q2aa = {
        0.3, -0.5, 0.8, 0.0001, 0.0002, -0.0001, 1.046864217863264, 2.093728435726529,
        2.093728435726529 },
    log = {
        0.3, -0.5, 0.8, 0.0001, 0.0002, -0.0001, 1.046864217863264, 2.093728435726529,
        2.093728435726529 },
    eul_XYZ = {
        0.346929449654899, -0.681632986593423, -0.644217687237691, 0.765047578375486,
        0.603004398760214, -0.226026321249623, 0.542533095565564, -0.414441994329199,
        0.730681649935512 },
    m2e_XYZ = {
        0.3, -0.7, 1.1 },
    eul_ZYX = {
        0.730681649935512, -0.682535633418136, -0.01579352911864, 0.226026321249623,
        0.263669453487192, -0.937758242512497, 0.644217687237691, 0.681632986593423,
        0.346929449654899 },
    m2e_ZYX = {
        0.3, -0.7, 1.1 },
    eul_ZXZ = {
        0.231900605058429, -0.953927573102912, -0.190379344067373, 0.785235683828831,
        0.068064579184128, 0.615444663558273, -0.574131544347986, -0.292214644284772,
        0.764842187284488 },
    m2e_ZXZ = {
        -2.841592653589793, 0.7, -2.041592653589793 },
    eul_YXY = {
        0.231900605058429, -0.190379344067373, 0.953927573102912, -0.574131544347986,
        0.764842187284488, 0.292214644284772, -0.785235683828831, -0.615444663558273,
        0.068064579184128 },
    m2e_YXY = {
        -2.841592653589793, 0.7, -2.041592653589793 },
    ang = {
        0.989949493661167, 0.007073130255687, 3.134486288487458 },
    relang = {
        0.990101033695238, 3.1344788636825, 2.851800558433809 },
    cosang = {
        0.548732084493095, 0.99999997, -0.999999500000042 },
    rawmul = {
        -0.08, 0.03, -0.08, -0.69 },
    mul = {
        0.08, -0.03, 0.08, 0.69 },
    inv = {
        0.879980705610383, -0.143949595053732, 0.23991599175622, -0.383865586809952,
        0.9999999925, -4.9999999875e-05, -9.999999975e-05, 4.9999999875e-05,
        0.000499999979167, -0.333333291666668, -0.666666583333335, -0.666666583333335 },
    apply = {
        -1.834330310496773, 0.621609746418528, 3.20137995794787, 1.000799979992,
        1.999599960004, 2.999999900000001, 1.445110999888898, 2.888555333388908,
        1.888889166666643 },
    r6 = {
        0.872871560943969, 0.218217890235992, -0.436435780471985, 0.086565979368291,
        0.810986543555567, 0.578625230514365, 0.480209922129111, -0.54284599892856,
        0.688996844793942 },
    m6 = {
        0.590175056325361, -0.744660239601575, -0.311728295872995, 0.606517000160686,
        0.663851450693836, -0.43753671837661, 0.999999975, 0.000100009999, 0.000199994998,
        -9.9989999e-05, 0.99999999, -0.000100009999, -0.777777333333371,
        0.443777666777787, 0.445110999888898, 0.445110999888898, -0.111110833333357,
        0.888555333388908 },
    hat = {
        0.0, -0.8, -0.5, 0.8, 0.0, -0.3, 0.5, 0.3, 0.0 },
    hatinv = {
        0.3, -0.5, 0.8, 0.0001, 0.0002, -0.0001, 1.046864217863264, 2.093728435726529,
        2.093728435726529 },
    glog = {
        0.3, -0.2, 0.5, 0.7, 0.1, -0.4, 0.2, 0.6, -0.3 },
    gm2q = {
        0.023250666988692, -0.198867996632511, 0.142048569023222, 0.198867996632511,
        0.023250666988692, 0.056819427609289, -0.142048569023222, -0.056819427609289,
        0.023250666988692, 0.037499375281242, -0.1750000013125, 0.1250000009375,
        0.1750000013125, 0.037499375281242, 0.050000000375, -0.1250000009375,
        -0.050000000375, 0.037499375281242, 0.018792189852539, -0.075000009375001,
        0.112500014062501, -0.075000009375001, -0.018792189852539, 0.262500032812503,
        -0.112500014062501, 0.262500032812503, 0.018792189852539 },
    gang = {
        -0.598087365491708, 0.0, 0.0, 0.0, -0.598087365491708, 0.0, 0.0, 0.0,
        -0.598087365491708, -35.35622297595726, 0.0, 0.0, 0.0, -35.35622297595726, 0.0,
        0.0, 0.0, -35.35622297595726, -35.35622297595726, 0.0, 0.0, 0.0,
        -35.35622297595726, 0.0, 0.0, 0.0, -35.35622297595726 },
    aafast_pi = {
        3.141592653589793, 0.0, 0.0 },
    aa_pi = {
        3.141592653589793, 0.0, 0.0 },
    gaafast = {
        -0.087247338655704, -0.342317158236134, -0.147339641876297, 0.342317158236134,
        -0.087247338655704, -0.194977516359837, 0.147339641876297, 0.194977516359837,
        -0.087247338655704, -1.3e-12, 0.200000004166667, 0.050000004833333,
        -0.200000004166667, -1.3e-12, -0.350000005666667, -0.050000004833333,
        0.350000005666667, -1.3e-12, -0.418878811083584, 750.3414241914923,
        662.9255054683738, -750.3414241914923, -0.418878811083584, -174.43309388311394,
        -662.9255054683738, 174.43309388311394, -0.418878811083584 },
}

local TOL = 1e-9
local function f64(t) return tide.tensor(t, { dtype = "float64" }) end

-- V: a generic rotation, one near the identity, one of angle pi - 1e-3 about (1, 2, 2) / 3
local function inputs()
    local ax = f64({ 1, 2, 2 }) / 3
    return tide.stack({ f64({ 0.3, -0.5, 0.8 }), f64({ 1e-4, 2e-4, -1e-4 }),
        ax * (math.pi - 1e-3) })
end

describe("ported pytorch3d rotation_conversions.py and so3.py", function()
    it("converts between axis-angle, matrices and quaternions, and back", function()
        local V = inputs()
        local R = so3_exp_map(V)
        assert_close_list(want.R, flat(R), TOL, "so3_exp_map")
        assert_close_list(want.Rfast, flat(axis_angle_to_matrix(V, true)), TOL, "aa2m fast")
        local q = matrix_to_quaternion(R)
        assert_close_list(want.q, flat(q), TOL, "matrix_to_quaternion")
        assert_close_list(want.q2m, flat(quaternion_to_matrix(f64({ 0.9, 0.2, -0.3, 0.4 }))),
            TOL, "quaternion_to_matrix")
        assert_close_list(want.aa, flat(matrix_to_axis_angle(R)), 1e-8, "matrix_to_axis_angle")
        assert_close_list(want.aafast, flat(matrix_to_axis_angle(R, true)), 1e-8, "m2aa fast")
        assert_close_list(want.aa2q, flat(axis_angle_to_quaternion(V)), TOL, "aa2q")
        assert_close_list(want.q2aa, flat(quaternion_to_axis_angle(q)), 1e-8, "q2aa")
        assert_close_list(want.log, flat(so3_log_map(R)), 1e-8, "so3_log_map")
        local Rpi = tide.diag(f64({ 1, -1, -1 }))[{ tide.newaxis }]
        assert_close_list(want.aafast_pi, flat(matrix_to_axis_angle(Rpi, true)), TOL, "pi fast")
        assert_close_list(want.aa_pi, flat(matrix_to_axis_angle(Rpi)), TOL, "pi")
        assert_close_list(want.m6, flat(matrix_to_rotation_6d(R)), TOL, "matrix_to_rotation_6d")
        assert_close_list(want.r6, flat(rotation_6d_to_matrix(
            f64({ 0.4, 0.1, -0.2, 0.3, 0.9, 0.5 }))), TOL, "rotation_6d_to_matrix")
        assert.has_error(function() matrix_to_quaternion(tide.zeros(2, 3, 4)) end,
            "Invalid rotation matrix shape tide.Size({2, 3, 4}).")
    end)

    it("converts Euler angles both ways in four conventions and checks the convention", function()
        local E = f64({ 0.3, -0.7, 1.1 })
        for _, conv in ipairs({ "XYZ", "ZYX", "ZXZ", "YXY" }) do
            local M = euler_angles_to_matrix(E, conv)
            assert_close_list(want["eul_" .. conv], flat(M), TOL, "euler_angles_to_matrix " .. conv)
            assert_close_list(want["m2e_" .. conv], flat(matrix_to_euler_angles(M, conv)), 1e-8,
                "matrix_to_euler_angles " .. conv)
        end
        assert.has_error(function() euler_angles_to_matrix(E, "XXY") end, "Invalid convention XXY.")
        assert.has_error(function() matrix_to_euler_angles(tide.eye(3), "XYW") end,
            "Invalid letter W in convention string.")
    end)

    it("multiplies, inverts and applies quaternions", function()
        local a, b = f64({ 0.5, -0.1, 0.7, 0.2 }), f64({ -0.3, 0.6, 0.1, -0.4 })
        assert_close_list(want.rawmul, flat(quaternion_raw_multiply(a, b)), TOL, "raw_multiply")
        assert_close_list(want.mul, flat(quaternion_multiply(a, b)), TOL, "multiply")
        local q = matrix_to_quaternion(so3_exp_map(inputs()))
        assert_close_list(want.inv, flat(quaternion_invert(q)), TOL, "invert")
        assert_close_list(want.apply, flat(quaternion_apply(q, f64({ { 1, 2, 3 } }))), TOL, "apply")
    end)

    it("measures rotation angles with acos_linear_extrapolation and hat / hat_inv", function()
        local V = inputs()
        local R = so3_exp_map(V)
        assert_close_list(want.ang, flat(so3_rotation_angle(R)), 1e-8, "so3_rotation_angle")
        assert_close_list(want.cosang, flat(so3_rotation_angle(R, { cos_angle = true })), TOL,
            "cos_angle")
        local R2 = R:index_select(1, tide.tensor({ 2, 3, 1 }))
        assert_close_list(want.relang, flat(so3_relative_angle(R, R2)), 1e-8, "relative_angle")
        assert_close_list(want.hat, flat(hat(V[{ { 1, 1 } }])), TOL, "hat")
        assert_close_list(want.hatinv, flat(hat_inv(hat(V))), TOL, "hat_inv")
        assert.has_error(function() hat_inv(tide.ones(1, 3, 3)) end,
            "One of input matrices is not skew-symmetric.")
        assert.has_error(function() so3_rotation_angle(R * 2) end,
            "A matrix has trace outside valid range [-1-eps,3+eps].")
    end)

    it("differentiates so3_log_map(so3_exp_map(v)), matrix_to_quaternion and the angle", function()
        local w = f64({ 0.3, -0.2, 0.5, 0.7, 0.1, -0.4, 0.2, 0.6, -0.3 }):view(3, 3)
        local v = inputs():requires_grad_();
        (so3_log_map(so3_exp_map(v)) * w):sum():backward()
        assert_close_list(want.glog, flat(v.grad), 1e-7, "d log(exp(v)) / dv")
        local R = so3_exp_map(inputs())
        local Rg = R:clone():requires_grad_();
        (matrix_to_quaternion(Rg) * f64({ 0.3, -0.2, 0.5, 0.7 })):sum():backward()
        assert_close_list(want.gm2q, flat(Rg.grad), 1e-7, "d matrix_to_quaternion / dR")
        local Rg2 = R:clone():requires_grad_()
        so3_rotation_angle(Rg2):sum():backward()
        assert_close_list(want.gang, flat(Rg2.grad), 1e-7, "d so3_rotation_angle / dR")
        local Rg3 = R:clone():requires_grad_();
        (matrix_to_axis_angle(Rg3, true) * w):sum():backward()
        assert_close_list(want.gaafast, flat(Rg3.grad), 1e-5, "d matrix_to_axis_angle fast / dR")
    end)

    it("draws random quaternions and rotations of the right shape (values unchecked)", function()
        local q = random_quaternions(5, "float64")
        assert.same({ 5, 4 }, q.shape)
        assert.equal("float64", q.dtype)
        assert.is_true(q[{ {}, 1 }]:ge(0):all():item())
        assert_close_list({ 1, 1, 1, 1, 1 }, flat(q:norm({ dim = 2 })), 1e-12, "unit norm")
        local Rs = random_rotations(4)
        assert.same({ 4, 3, 3 }, Rs.shape)
        assert.same({ 3, 3 }, random_rotation().shape)
        local I = tide.bmm(Rs, Rs:permute(1, 3, 2))
        assert.is_true(I:allclose(tide.eye(3):expand(4, 3, 3), 1e-5, 1e-5))
    end)
end)
