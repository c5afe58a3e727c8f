-- threads_spec.lua — one OpenMP pool (issue 15): OpenBLAS in its OpenMP build, core.so kept
-- loaded at lua_close while OpenMP's workers live, and kernels that split across threads from
-- tens of thousands of elements give the one-thread results.
local tide = require("tide")
local host = require("spec.support.host")

local OMP_BLAS = "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0"

local function exists(path)
    local f = io.open(path, "rb")
    if f then
        f:close()
    end
    return f ~= nil
end

local function run(cmd)
    local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"")
    local out = p:read("*a")
    p:close()
    return out
end

describe("one thread pool", function()
    it("links core.so against OpenBLAS's OpenMP build where Debian installs it", function()
        if not exists(OMP_BLAS) then
            pending("libopenblas0-openmp is not installed")
            return
        end
        local out = run("ldd build/lua/tide/core.so")
        assert.is_truthy(out:find("libopenblas.so.0 => " .. OMP_BLAS, 1, true), out)
    end)

    -- clang's OpenMP runtime is LLVM's libomp, and the OpenMP OpenBLAS is gcc's (libgomp): with
    -- both pools in one process a threaded sgemm waited forever (the fuzzer under make asan)
    it("links a clang build (make asan) against the pthreads OpenBLAS: one OpenMP runtime", function()
        if not exists(OMP_BLAS) then
            pending("libopenblas0-openmp is not installed")
            return
        end
        local out = run("make -s -p -n CC=clang NVCC_FOUND= | grep '^BLAS_LIBS'")
        assert.is_truthy(out:find("/openblas-pthread -lopenblas", 1, true), out)
        out = run("make -s -p -n CC=gcc NVCC_FOUND= | grep '^BLAS_LIBS'")
        assert.is_truthy(out:find("/openblas-openmp -lopenblas", 1, true), out)
    end)

    it("exits cleanly after threaded kernels and BLAS calls (core.so is not unloaded)", function()
        local script = "local t = require 'tide'; local a = t.randn(512, 512); "
            .. "local b = (a + a):exp():matmul(a); assert(b.shape[1] == 512); "
            .. "collectgarbage(); print('done')"
        local out = run("LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/lua/?.so;;' "
            .. "lua5.4 -e \"" .. script .. "\"")
        assert.are.equal("done\nexit=0\n", out)
    end)

    it("spins 3,000 iterations after a parallel region unless the user chose a policy", function()
        local cmd = "LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/lua/?.so;;' "
            .. "OMP_DISPLAY_ENV=VERBOSE %s lua5.4 -e \"require 'tide'; "
            .. "print('child env', os.getenv('GOMP_SPINCOUNT'))\""
        local out = run(string.format(cmd, "env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY"))
        assert.is_truthy(out:find("GOMP_SPINCOUNT = '3000'", 1, true), out)
        -- libgomp has read it: processes the program starts do not inherit it
        assert.is_truthy(out:find("child env\tnil", 1, true), out)
        out = run(string.format(cmd, "env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=ACTIVE"))
        assert.is_truthy(out:find("OMP_WAIT_POLICY = 'ACTIVE'", 1, true), out)
        assert.is_falsy(out:find("GOMP_SPINCOUNT = '3000'", 1, true), out)
        out = run(string.format(cmd, "GOMP_SPINCOUNT=12345"))
        assert.is_truthy(out:find("GOMP_SPINCOUNT = '12345'", 1, true), out)
        assert.is_truthy(out:find("child env\t12345", 1, true), out)
    end)

    it("gives the one-thread results above the thread grain", function()
        local n = 300000
        local a = tide.arange(n, { dtype = "float32" }):mul(1e-5)
        local b = tide.ones(n, { dtype = "float32" })
        local c = a + b
        local e = a:exp()
        for _, i in ipairs({ 1, 1000, host.idiv(n, 2), n }) do
            local x = (i - 1) * 1e-5
            assert.is_true(math.abs(c[i]:item() - (x + 1)) < 1e-5)
            assert.is_true(math.abs(e[i]:item() - math.exp(x)) < 1e-5 * math.exp(x))
        end
    end)
end)
