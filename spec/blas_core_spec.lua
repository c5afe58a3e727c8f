-- blas_core_spec.lua — tide picks OpenBLAS's kernels from the CPU's features (issue 15):
-- Debian 12's OpenBLAS falls back to its SSE3 "Prescott" kernels on CPU models newer than
-- itself (a Sapphire Rapids sgemm at a fifth of its speed); tide/init.lua's preload sets
-- OPENBLAS_CORETYPE before core.so loads OpenBLAS, unless the user set it, and takes it back
-- out of the environment afterwards. tide.cpu_info() says what runs; tide.set_num_threads
-- changes the threads.
local tide = require("tide")

local function run(cmd)
    local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"")
    local out = p:read("*a")
    p:close()
    return out
end

-- the family the preload's mapping gives this CPU, from /proc/cpuinfo's flags
local function expected_core()
    local f = io.open("/proc/cpuinfo", "r")
    if not f then
        return nil
    end
    local flags = f:read("*a"):match("\nflags%s*:%s*([^\n]*)") or ""
    f:close()
    local has = {}
    for w in flags:gmatch("%S+") do
        has[w] = true
    end
    if has.avx512f and has.avx512bw and has.avx512vl and has.avx512dq and has.avx512cd then
        return "SkylakeX"
    elseif has.avx2 and has.fma then
        return "Haswell"
    end
    return nil
end

local PROGRAM = "LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/lua/?.so;;' %s lua5.4 -e "
    .. "\"local i = require('tide').cpu_info(); print('core', i.blas_core, 'threads', i.threads); "
    .. "print('child', os.getenv('OPENBLAS_CORETYPE'))\""

describe("tide.cpu_info", function()
    it("names the BLAS kernel family and the thread count", function()
        local info = tide.cpu_info()
        assert.are.equal("string", type(info.blas_core))
        assert.is_true(info.threads >= 1 and info.threads % 1 == 0)
    end)

    it("set_num_threads changes the threads the kernels and BLAS run on (PyTorch's name)",
        function()
            local before = tide.get_num_threads()
            assert.are.equal(tide.cpu_info().threads, before)
            local a = tide.randn(96, 96, { dtype = "float64" })
            local want = a:matmul(a):sum():item()
            tide.set_num_threads(1)
            assert.are.equal(1, tide.get_num_threads())
            assert.are.equal(1, tide.cpu_info().threads)
            -- the same product on one thread (sums in another order: to rounding)
            assert.is_true(math.abs(a:matmul(a):sum():item() - want) <= 1e-9 * math.abs(want))
            tide.set_num_threads(before)
            assert.are.equal(before, tide.get_num_threads())
            for _, bad in ipairs({ 0, -2, 70000 }) do
                local ok, err = pcall(tide.set_num_threads, bad)
                assert.is_false(ok)
                assert.matches("tide: set_num_threads: n must be from 1 to 65536, got " .. bad,
                    tostring(err), 1, true)
            end
            local ok, err = pcall(tide.set_num_threads, 1.5)
            assert.is_false(ok)
            assert.matches("tide: set_num_threads: n must be an integer, got 1.5", tostring(err),
                1, true)
            assert.are.equal(before, tide.get_num_threads())
        end)

    it("runs the kernels of the CPU's vector units when the user chose none", function()
        local want = expected_core()
        if not want then
            pending("this CPU has neither AVX-512 nor AVX2: OpenBLAS's own choice stands")
            return
        end
        local out = run(string.format(PROGRAM, "env -u OPENBLAS_CORETYPE"))
        assert.is_truthy(out:find("core\t" .. want .. "\t", 1, true), out)
        -- OpenBLAS has read it: processes the program starts do not inherit it
        assert.is_truthy(out:find("child\tnil\n", 1, true), out)
    end)

    it("keeps the kernels the user chose", function()
        local out = run(string.format(PROGRAM, "OPENBLAS_CORETYPE=Prescott"))
        assert.is_truthy(out:find("core\tPrescott\t", 1, true), out)
        assert.is_truthy(out:find("child\tPrescott\n", 1, true), out)
    end)
end)
