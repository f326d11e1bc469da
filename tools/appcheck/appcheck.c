/* The build-time check of an application description (TERN_APP_BUILD_CHECK,
 * cmake tern_app_build_check): the app's own sources and kernel/app_check.c,
 * compiled for the build machine with the image's definitions, run once at
 * link time. The same tern_app_validate as at run time, so a description is
 * refused with the same named error, before there is an image; the image
 * then carries no validator.
 *
 * The app's main() is renamed (-Dmain=tern_appcheck_app_main), its handlers
 * are never called: what they reference from the kernel is left unresolved
 * (--unresolved-symbols=ignore-all). The description is the one the app
 * names with TERN_APP_CHECKED(desc). */
#undef main
#include <stdio.h>

#include "tern/tern.h"

/* What the model's own sources define in the image (policy_<model>.c,
 * sched_threads.c, sched_hybrid.c), as the check needs it. */
const char *const tern_model_name = TERN_MODEL_NAME;
#if defined(TERN_MODEL_threads) || defined(TERN_MODEL_adaptive) || defined(TERN_MODEL_hybrid)
bool sched_tasks_are_threads(void);
bool sched_tasks_are_threads(void) { return true; }
#endif

extern const TERN_DESC tern_app_desc *const tern_appcheck_desc __attribute__((weak));

int main(int argc, char **argv)
{
    const char *image = argc > 1 ? argv[1] : "image";
    if (!&tern_appcheck_desc || !tern_appcheck_desc) {
        fprintf(stderr, "%s: TERN_APP_BUILD_CHECK, but no TERN_APP_CHECKED(desc) in its sources\n",
                image);
        return 2;
    }
    tern_app_error err;
    tern_status st = tern_app_validate(tern_appcheck_desc, &err);
    if (st != TERN_OK) {
        fprintf(stderr, "%s: refused at build time: %s: %s (task %d, field %s)\n", image,
                tern_status_name(st), err.text, err.task_index, err.field);
        return 1;
    }
    return 0;
}
