/* Print the first COUNT gaps for SEED and MEAN, one per line: the reference
 * output for the Python twin of the arrival generator. */
#include <stdio.h>
#include <stdlib.h>

#include "../../bench/seed000/arrivals.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: arrivals_dump SEED MEAN_CYCLES COUNT\n");
        return 2;
    }
    arrivals_rng r;
    arrivals_seed(&r, (uint32_t)strtoul(argv[1], NULL, 0));
    uint32_t mean = (uint32_t)strtoul(argv[2], NULL, 0);
    long count = strtol(argv[3], NULL, 0);
    for (long i = 0; i < count; i++)
        printf("%lu\n", (unsigned long)arrivals_next_gap(&r, mean));
    return 0;
}
