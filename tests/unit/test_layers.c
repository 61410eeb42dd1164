/*
 * The layers of user/ (docs/hacking.md, "Layers"): a folder includes only
 * folders of its own layer or below, and the files of one folder do not call
 * or include each other in a circle.
 *
 * Read from the tree itself: every `#include "DIR/FILE"` under user/, and,
 * for the calls, the symbols each object of build/user/DIR defines and uses
 * (nm), so a circle made by calls through a shared header is seen too.
 *
 * A circle is of files that call each other (a .c file and its .h are one
 * file here), or of headers that include each other.
 *
 * The suites (rfc2544/, connsearch/) are held tighter (issue 25: "the
 * suites include only the client's public header and the specification"):
 * besides their own folder, only client/client.h, spec/, report/report.h
 * (the sink the client reports into, whose suite events they give), and
 * the helpers below every part, util/ and search/. Anything else (engine/,
 * proto/, loader/, meas/, net/, frame/, bpf/, client/'s own headers,
 * another suite) is a finding, though its layer is lower.
 *
 * What is still out of order today stands in tests/unit/layers_known.txt, a
 * line each; a new one fails here, and so does a line that no longer holds
 * (the list only shrinks).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define KNOWN "tests/unit/layers_known.txt"

/* The layers, lowest first (docs/hacking.md): a folder may include its own
 * layer and those below it. bpf/ is the BPF side's shared headers (and the
 * build's skeletons, bpf/X.skel.h). */
static const struct {
	const char *dir;
	int layer;
} layers[] = {
	{ "bpf", 0 },
	{ "util", 1 },
	{ "search", 1 },
	{ "frame", 2 },
	{ "net", 3 },
	{ "spec", 4 },
	{ "meas", 5 },
	{ "proto", 6 },
	{ "loader", 7 },
	{ "engine", 8 },
	{ "probe", 9 },
	{ "report", 10 },
	{ "client", 11 },
	{ "rfc2544", 12 },
	{ "connsearch", 12 },
	{ "server", 12 },
	{ "otg", 12 },
	{ "cli", 13 },
	{ "main.c", 14 },
};

/* The suites, and what they may include beyond their own folder (a folder "x/", or one header). */
static const char *const suites[] = { "rfc2544", "connsearch" };
static const char *const suite_may[] = { "client/client.h", "spec/", "report/report.h", "util/", "search/" };

static int is_suite(const char *dir)
{
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		if (!strcmp(suites[i], dir))
			return 1;
	return 0;
}

static int suite_may_include(const char *inc)
{
	for (size_t i = 0; i < sizeof(suite_may) / sizeof(suite_may[0]); i++) {
		size_t n = strlen(suite_may[i]);
		if (suite_may[i][n - 1] == '/' ? !strncmp(inc, suite_may[i], n) : !strcmp(inc, suite_may[i]))
			return 1;
	}
	return 0;
}

static int layer_of(const char *dir)
{
	for (size_t i = 0; i < sizeof(layers) / sizeof(layers[0]); i++)
		if (!strcmp(layers[i].dir, dir))
			return layers[i].layer;
	return -1;
}

/* Findings, a line each ("user/a/b.c -> c/d.h", "circle user/x: a b"). */
#define MAXF 512
static char *found[MAXF];
static int nfound;

static void add_finding(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (int i = 0; i < nfound; i++)
		if (!strcmp(found[i], buf))
			return;
	assert_true(nfound < MAXF);
	found[nfound++] = strdup(buf);
}

/* ---- includes ---- */

static int is_src(const char *name)
{
	size_t n = strlen(name);
	return n > 2 && name[n - 2] == '.' && (name[n - 1] == 'c' || name[n - 1] == 'h');
}

/* The stem of a file: client.c and client.h are one file of a folder. */
static void stem(const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s", name);
	char *dot = strrchr(out, '.');
	if (dot)
		*dot = 0;
}

/* Same-folder include edges for the circle search, per folder. */
#define MAXN 64
struct folder {
	char dir[32];
	int n;
	char names[MAXN][48];
	unsigned char edge[MAXN][MAXN];
	const char *why[MAXN][MAXN];
};

static int node_of(struct folder *f, const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->names[i], name))
			return i;
	assert_true(f->n < MAXN);
	snprintf(f->names[f->n], sizeof(f->names[0]), "%s", name);
	return f->n++;
}

static void read_includes(const char *dir, const char *file, struct folder *f)
{
	char path[512], line[512], from[64];
	snprintf(path, sizeof(path), "user/%s%s%s", strcmp(dir, "main.c") ? dir : "", strcmp(dir, "main.c") ? "/" : "",
		 file);
	FILE *in = fopen(path, "r");
	assert_non_null(in);
	stem(file, from, sizeof(from));
	int me = layer_of(dir);
	if (me < 0)
		fail_msg("%s: folder user/%s has no layer: give it one in docs/hacking.md and %s", path, dir, __FILE__);
	while (fgets(line, sizeof(line), in)) {
		char inc[256];
		if (sscanf(line, " # include \"%255[^\"]\"", inc) != 1)
			continue;
		char *slash = strchr(inc, '/');
		if (!slash) /* a header the build writes (build/xp_version.h) */
			continue;
		char to[64];
		snprintf(to, sizeof(to), "%.*s", (int)(slash - inc), inc);
		if (!strcmp(to, dir)) {
			/* A header that includes another of its folder: the calls
			 * (read_calls) give the .c files' ties. */
			char other[64];
			stem(slash + 1, other, sizeof(other));
			if (file[strlen(file) - 1] == 'h' && strcmp(other, from))
				f->edge[node_of(f, from)][node_of(f, other)] = 1;
			continue;
		}
		int them = layer_of(to);
		if (them < 0)
			fail_msg("%s: #include \"%s\": folder %s has no layer", path, inc, to);
		if (them > me)
			add_finding("%s -> %s", path, inc);
		else if (is_suite(dir) && !suite_may_include(inc))
			add_finding("%s -> %s (a suite includes only its own folder, client/client.h, spec/, "
				    "report/report.h, util/, search/)", path, inc);
	}
	fclose(in);
}

/* ---- calls (nm over the folder's objects) ---- */

static void read_calls(struct folder *f, int sources)
{
	char cmd[512], line[512];
	snprintf(cmd, sizeof(cmd), "nm -A build/user/%s/*.o 2>/dev/null", f->dir);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	/* Defined symbols with their file, then the uses. */
	static char defs[4096][80], def_file[4096][48];
	static char uses[16384][80], use_file[16384][48];
	int nd = 0, nu = 0, objects = 0;
	char last[512] = "";
	while (fgets(line, sizeof(line), p)) {
		char obj[256], a[128], b[128], c[128];
		char *colon = strstr(line, ".o:");
		if (!colon)
			continue;
		snprintf(obj, sizeof(obj), "%.*s", (int)(colon - line), line);
		const char *base = strrchr(obj, '/') ? strrchr(obj, '/') + 1 : obj;
		/* An object left over from a file that has moved away is not of this folder. */
		char src[128];
		snprintf(src, sizeof(src), "user/%s/%.60s.c", f->dir, base);
		if (access(src, F_OK))
			continue;
		if (strcmp(obj, last)) {
			objects++;
			snprintf(last, sizeof(last), "%s", obj);
		}
		int k = sscanf(colon + 3, "%127s %127s %127s", a, b, c);
		if (k == 2 && !strcmp(a, "U")) {
			if (nu < 16384) {
				snprintf(uses[nu], sizeof(uses[0]), "%.79s", b);
				snprintf(use_file[nu++], sizeof(use_file[0]), "%.47s", base);
			}
		} else if (k == 3 && strchr("TDBR", b[0]) && nd < 4096) {
			snprintf(defs[nd], sizeof(defs[0]), "%.79s", c);
			snprintf(def_file[nd++], sizeof(def_file[0]), "%.47s", base);
		}
	}
	pclose(p);
	if (objects < sources)
		fail_msg("%d of the %d objects of build/user/%s are missing: build first (make)", sources - objects, sources, f->dir);
	for (int u = 0; u < nu; u++)
		for (int d = 0; d < nd; d++)
			if (!strcmp(uses[u], defs[d]) && strcmp(use_file[u], def_file[d])) {
				int from = node_of(f, use_file[u]), to = node_of(f, def_file[d]);
				f->edge[from][to] = 1;
				if (!f->why[from][to])
					f->why[from][to] = strdup(defs[d]);
			}
}

/* ---- circles: strongly connected parts of more than one file (Tarjan) ---- */

static int idx[MAXN], low[MAXN], onstack[MAXN], stack_[MAXN], sp, counter;

static void scc(struct folder *f, int v)
{
	idx[v] = low[v] = ++counter;
	stack_[sp++] = v;
	onstack[v] = 1;
	for (int w = 0; w < f->n; w++) {
		if (!f->edge[v][w])
			continue;
		if (!idx[w]) {
			scc(f, w);
			if (low[w] < low[v])
				low[v] = low[w];
		} else if (onstack[w] && idx[w] < low[v])
			low[v] = idx[w];
	}
	if (low[v] != idx[v])
		return;
	char names[MAXN][48];
	int k = 0, w;
	do {
		w = stack_[--sp];
		onstack[w] = 0;
		snprintf(names[k++], sizeof(names[0]), "%s", f->names[w]);
	} while (w != v);
	if (k < 2)
		return;
	qsort(names, (size_t)k, sizeof(names[0]), (int (*)(const void *, const void *))strcmp);
	char buf[1024] = "";
	for (int i = 0; i < k && strlen(buf) < sizeof(buf) - 50; i++) {
		strcat(buf, " ");
		strcat(buf, names[i]);
	}
	add_finding("circle user/%s:%s", f->dir, buf);
}

static void circles(struct folder *f)
{
	memset(idx, 0, sizeof(idx));
	sp = counter = 0;
	for (int v = 0; v < f->n; v++)
		if (!idx[v])
			scc(f, v);
}

/* Calls are read per object (x.o): fold them into the stems of the includes. */
static void fold_objects(struct folder *f)
{
	for (int i = 0; i < f->n; i++) {
		char *dot = strstr(f->names[i], ".o");
		if (dot && !dot[2]) {
			*dot = 0;
			for (int j = 0; j < i; j++)
				if (!strcmp(f->names[j], f->names[i])) {
					/* merge node i into j */
					for (int k = 0; k < f->n; k++) {
						f->edge[j][k] |= f->edge[i][k];
						f->edge[k][j] |= f->edge[k][i];
						f->edge[i][k] = f->edge[k][i] = 0;
					}
					f->edge[j][j] = 0;
					f->names[i][0] = '\1'; /* an empty node: no edges left */
					break;
				}
		}
	}
}

static void read_tree(void)
{
	nfound = 0;
	DIR *top = opendir("user");
	assert_non_null(top);
	struct dirent *de;
	read_includes("main.c", "main.c", &(struct folder){ 0 });
	while ((de = readdir(top))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "main.c"))
			continue;
		struct folder *f = calloc(1, sizeof(*f));
		assert_non_null(f);
		snprintf(f->dir, sizeof(f->dir), "%.31s", de->d_name);
		char path[64];
		snprintf(path, sizeof(path), "user/%.31s", de->d_name);
		DIR *d = opendir(path);
		assert_non_null(d);
		struct dirent *fe;
		int sources = 0;
		while ((fe = readdir(d)))
			if (is_src(fe->d_name)) {
				read_includes(f->dir, fe->d_name, f);
				sources += fe->d_name[strlen(fe->d_name) - 1] == 'c';
			}
		closedir(d);
		read_calls(f, sources);
		fold_objects(f);
		circles(f);
		for (int i = 0; i < MAXN; i++)
			for (int j = 0; j < MAXN; j++)
				free((void *)f->why[i][j]);
		free(f);
	}
	closedir(top);
}

/* Every finding is in the known list, and every line of the list is still found. */
static void against_known(void **state)
{
	(void)state;
	read_tree();
	FILE *k = fopen(KNOWN, "r");
	assert_non_null(k);
	char line[1024];
	char *known[MAXF];
	int nk = 0, bad = 0;
	while (fgets(line, sizeof(line), k)) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		assert_true(nk < MAXF);
		known[nk++] = strdup(line);
	}
	fclose(k);
	for (int i = 0; i < nfound; i++) {
		int ok = 0;
		for (int j = 0; j < nk; j++)
			ok |= !strcmp(found[i], known[j]);
		if (!ok) {
			printf("new, against the layers (docs/hacking.md): %s\n", found[i]);
			bad++;
		}
	}
	for (int j = 0; j < nk; j++) {
		int ok = 0;
		for (int i = 0; i < nfound; i++)
			ok |= !strcmp(found[i], known[j]);
		if (!ok) {
			printf("mended, strike it from %s: %s\n", KNOWN, known[j]);
			bad++;
		}
	}
	int up = 0, circ = 0, suite = 0;
	for (int i = 0; i < nfound; i++)
		!strncmp(found[i], "circle ", 7) ? circ++ : strstr(found[i], "(a suite includes only") ? suite++ : up++;
	printf("%d upward includes, %d circles inside a folder, %d suite includes beyond the client and the spec\n", up,
	       circ, suite);
	for (int j = 0; j < nk; j++)
		free(known[j]);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(against_known),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
