// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The evidence table of compat.h: what in a program or in the objects its
 * loader maps says how it fares under a forced shadow stack. One row per
 * pattern; the corpus of real programs tunes it here and nowhere else.
 *
 * Columns: what the row matches (an object's file name, a symbol, a section
 * name, a note owner), the fnmatch(3) pattern, where a symbol counts
 * (IMPORT: the object calls it; DEFINE: it has it; STATIC: a static
 * program has it linked in), the note type, the class of a match, what can
 * mend it (then it is that class only where it is mended: otherwise
 * switches-uncovered), and the reason the verdict says.
 *
 * Honesty: "incompatible" only where the runtime is known to move stacks or
 * rewrite return addresses behind the shadow stack's back; a JIT nobody
 * measured is "unknown", with the reason. Objects a program loads later
 * with dlopen() are not in the closure and are not seen (a Python
 * extension, HotSpot's libjvm.so behind the java launcher): their rows
 * match when such an object is named to `cetctl elf` itself.
 */
#include "c.h"
#include "compat.h"

#define IMPORT	COMPAT_SYM_IMPORT
#define DEFINE	COMPAT_SYM_DEFINE
#define STATIC	COMPAT_SYM_STATIC

#define NT_GO_BUILDID	4	/* Go's build-ID note: owner "Go", type 4 */

/* reasons said more than once */
#define GO		"Go runtime: it switches goroutine stacks itself"
#define FCONTEXT	"Boost.Context: switches stacks in its own assembly (fcontext)"
#define RUBY		"Ruby: fibers switch stacks in its own assembly (coroutine_transfer)"
#define V8		"V8 JIT: lazy deoptimization rewrites return addresses on the stack"
#define UCONTEXT	"ucontext: switches stacks (makecontext, swapcontext, setcontext)"
#define LONGJMP		"longjmp: leaves the shadow stack deeper than the stack"

const struct compat_rule compat_rules[] = {
	/* Go: any of its marks, stripped or not */
	{ COMPAT_M_SECTION, ".go.buildinfo", 0, 0, COMPAT_INCOMPATIBLE, 0, GO },
	{ COMPAT_M_NOTE, "Go", 0, NT_GO_BUILDID, COMPAT_INCOMPATIBLE, 0, GO },
	{ COMPAT_M_SYMBOL, "runtime.morestack", DEFINE, 0, COMPAT_INCOMPATIBLE, 0, GO },
	{ COMPAT_M_SYMBOL, "runtime.gogo", DEFINE, 0, COMPAT_INCOMPATIBLE, 0, GO },
	{ COMPAT_M_OBJECT, "libgo.so*", 0, 0, COMPAT_UNKNOWN, 0,
	  "gccgo runtime (libgo): goroutines on split stacks; not known to be safe" },
	{ COMPAT_M_SYMBOL, "__morestack", DEFINE, 0, COMPAT_UNKNOWN, 0,
	  "split stacks (-fsplit-stack, __morestack): not known to be safe" },

	/* Boost.Context and what is built on it (Boost.Coroutine, Fiber) */
	{ COMPAT_M_OBJECT, "libboost_context.so*", 0, 0, COMPAT_INCOMPATIBLE, 0, FCONTEXT },
	{ COMPAT_M_SYMBOL, "jump_fcontext", IMPORT | DEFINE, 0, COMPAT_INCOMPATIBLE, 0, FCONTEXT },
	{ COMPAT_M_SYMBOL, "make_fcontext", IMPORT | DEFINE, 0, COMPAT_INCOMPATIBLE, 0, FCONTEXT },
	{ COMPAT_M_SYMBOL, "ontop_fcontext", IMPORT | DEFINE, 0, COMPAT_INCOMPATIBLE, 0, FCONTEXT },

	/* Ruby (fibers, and Enumerator#next, which runs on one) */
	{ COMPAT_M_OBJECT, "libruby*.so*", 0, 0, COMPAT_INCOMPATIBLE, 0, RUBY },
	{ COMPAT_M_SYMBOL, "coroutine_transfer", IMPORT | DEFINE, 0, COMPAT_INCOMPATIBLE, 0, RUBY },
	{ COMPAT_M_SYMBOL, "rb_fiber_*", IMPORT | DEFINE, 0, COMPAT_INCOMPATIBLE, 0, RUBY },

	/* greenlet (gevent, eventlet): a Python extension, loaded by dlopen */
	{ COMPAT_M_OBJECT, "_greenlet*.so", 0, 0, COMPAT_INCOMPATIBLE, 0,
	  "greenlet: switches C stacks by copying them (slp_switch)" },

	/* V8: node links it in, or libnode / libv8 */
	{ COMPAT_M_OBJECT, "libnode.so*", 0, 0, COMPAT_INCOMPATIBLE, 0, V8 },
	{ COMPAT_M_OBJECT, "libv8*.so*", 0, 0, COMPAT_INCOMPATIBLE, 0, V8 },
	{ COMPAT_M_SYMBOL, "_ZN2v88internal11Deoptimizer*", DEFINE, 0, COMPAT_INCOMPATIBLE, 0, V8 },

	/* JITs and runtimes nobody has measured under a shadow stack */
	{ COMPAT_M_OBJECT, "libluajit-5.1.so*", 0, 0, COMPAT_UNKNOWN, 0,
	  "JIT (LuaJIT): not known to be safe" },
	{ COMPAT_M_OBJECT, "libgccjit.so*", 0, 0, COMPAT_UNKNOWN, 0,
	  "JIT (libgccjit): not known to be safe" },
	{ COMPAT_M_SYMBOL, "pcre2_jit_compile_*", IMPORT, 0, COMPAT_UNKNOWN, 0,
	  "JIT (PCRE2): not known to be safe" },
	{ COMPAT_M_SYMBOL, "pcre_jit_stack_alloc", IMPORT, 0, COMPAT_UNKNOWN, 0,
	  "JIT (PCRE): not known to be safe" },
	{ COMPAT_M_OBJECT, "libjvm.so", 0, 0, COMPAT_UNKNOWN, 0,
	  "JIT (HotSpot): not known to be safe" },
	{ COMPAT_M_OBJECT, "libjli.so", 0, 0, COMPAT_UNKNOWN, 0,
	  "Java launcher: loads the HotSpot JIT (libjvm.so); not known to be safe" },
	{ COMPAT_M_OBJECT, "libmonosgen-2.0.so*", 0, 0, COMPAT_UNKNOWN, 0,
	  "JIT (Mono): not known to be safe" },
	{ COMPAT_M_OBJECT, "libmozjs-*.so*", 0, 0, COMPAT_UNKNOWN, 0,
	  "JIT (SpiderMonkey): not known to be safe" },
	{ COMPAT_M_OBJECT, "libjavascriptcoregtk-*.so*", 0, 0, COMPAT_UNKNOWN, 0,
	  "JIT (JavaScriptCore): not known to be safe" },
	{ COMPAT_M_OBJECT, "libQt[56]Qml.so*", 0, 0, COMPAT_UNKNOWN, 0,
	  "JIT (Qt QML): not known to be safe" },
	{ COMPAT_M_OBJECT, "libtcc.so*", 0, 0, COMPAT_UNKNOWN, 0,
	  "JIT (TinyCC): not known to be safe" },
	{ COMPAT_M_OBJECT, "beam.smp", 0, 0, COMPAT_UNKNOWN, 0,
	  "JIT (Erlang BEAM): not known to be safe" },
	{ COMPAT_M_SYMBOL, "_U[LG]x86_64_resume", IMPORT, 0, COMPAT_UNKNOWN, 0,
	  "libunwind resume: a non-local jump nothing mends; not known to be safe" },

	/* ucontext: mended by the preload library (and by glibc >= 2.39) */
	{ COMPAT_M_SYMBOL, "makecontext", IMPORT | STATIC, 0, COMPAT_SWITCHES_COVERED,
	  COMPAT_MENDS_UCONTEXT, UCONTEXT },
	{ COMPAT_M_SYMBOL, "swapcontext", IMPORT | STATIC, 0, COMPAT_SWITCHES_COVERED,
	  COMPAT_MENDS_UCONTEXT, UCONTEXT },
	{ COMPAT_M_SYMBOL, "setcontext", IMPORT | STATIC, 0, COMPAT_SWITCHES_COVERED,
	  COMPAT_MENDS_UCONTEXT, UCONTEXT },
	{ COMPAT_M_SYMBOL, "getcontext", IMPORT | STATIC, 0, COMPAT_SWITCHES_COVERED,
	  COMPAT_MENDS_UCONTEXT, UCONTEXT },

	/* the setjmp/longjmp family: what the preload library is for */
	{ COMPAT_M_SYMBOL, "longjmp", IMPORT | STATIC, 0, COMPAT_FORCED_SAFE,
	  COMPAT_MENDS_LONGJMP, LONGJMP },
	{ COMPAT_M_SYMBOL, "_longjmp", IMPORT | STATIC, 0, COMPAT_FORCED_SAFE,
	  COMPAT_MENDS_LONGJMP, LONGJMP },
	{ COMPAT_M_SYMBOL, "siglongjmp", IMPORT | STATIC, 0, COMPAT_FORCED_SAFE,
	  COMPAT_MENDS_LONGJMP, LONGJMP },
	{ COMPAT_M_SYMBOL, "__longjmp_chk", IMPORT | STATIC, 0, COMPAT_FORCED_SAFE,
	  COMPAT_MENDS_LONGJMP, LONGJMP },
};

const size_t compat_nrules = ARRAY_SIZE(compat_rules);
