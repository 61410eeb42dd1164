/* The engines' names by id; see engine_names.h. */
#include "spec/engine_names.h"

#include <string.h>

static const char *const names[XP_ENGINE_COUNT] = {
	[XP_ENGINE_AUTO] = "auto",
	[XP_ENGINE_XSK] = "xsk",
	[XP_ENGINE_LIVE] = "live",
	[XP_ENGINE_SOCKET] = "socket",
	[XP_ENGINE_NONE] = "none",
	[XP_ENGINE_XDP] = "xdp",
};

const char *xp_engine_name(enum xp_engine_id id)
{
	return (unsigned)id < XP_ENGINE_COUNT ? names[id] : "?";
}

int xp_engine_by_name(const char *name, enum xp_engine_id *id)
{
	for (unsigned i = 0; i < XP_ENGINE_COUNT; i++)
		if (!strcmp(name, names[i])) {
			*id = (enum xp_engine_id)i;
			return 0;
		}
	return -1;
}
