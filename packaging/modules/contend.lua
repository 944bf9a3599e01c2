-- Lmod modulefile of a contend prefix (packaging/modules/contend.lua): put
-- it into a module directory as contend/<version>.lua and set root to the
-- prefix given to `pip install --prefix` and then `cmake --install` (in that
-- order: the binary replaces pip's `contend` launcher script).  The
-- Python layer's site-packages is found under the prefix (lib/python3.*).
help([[contend: measure, reproduce and mitigate network congestion on HPC
systems.  `contend help` lists the commands, `man contend` documents them,
`contend version` shows the MPI library and the optional parts built.]])
whatis("Name: contend")
whatis("Description: network congestion benchmarks, simulator, throttle, analysis")

local root = "/opt/contend"  -- the install prefix: edit this line

-- the MPI library contend was built with, e.g.:
-- depends_on("openmpi")

prepend_path("PATH", pathJoin(root, "bin"))
prepend_path("MANPATH", pathJoin(root, "share/man"))
prepend_path("LD_LIBRARY_PATH", pathJoin(root, "lib"))  -- libcontend-throttle.so

-- the Python layer (pip install --prefix root): for `import contend` and the
-- contend-* programs run directly (`contend COMMAND` finds it by itself)
local p = io.popen("ls -d " .. root .. "/lib/python3*/site-packages 2>/dev/null")
if p then
  for dir in p:lines() do
    prepend_path("PYTHONPATH", dir)
  end
  p:close()
end
