/* The MAC protocols' shared validation pieces (mac_common.h). */
#include "mac_common.h"

void mac_refusal_text(char *text, size_t size, int schedule, const TERN_ROM char *why)
{
    int n = schedule >= 0 ? tern_snprintf(text, size, "schedule %d: ", schedule) : 0;
    size_t i = (size_t)n;
    while (*why && i + 1 < size)
        text[i++] = *why++;
    text[i < size ? i : size - 1] = 0;
}

uint16_t mac_region_ids(const bcs_config *bcs, uint8_t protocol)
{
    uint16_t ids = 0;
    for (uint8_t k = 0; k < bcs->n_slots; k++)
        for (uint8_t r = 0; r < bcs->slots[k].n_regions; r++) {
            const bcs_region *reg = &bcs->slots[k].regions[r];
            if (reg->protocol == protocol && reg->id < BCS_REGION_IDS) /* bcs_start refuses others */
                ids |= (uint16_t)(1u << reg->id);
        }
    return ids;
}

uint32_t mac_min_usable_us(const bcs_config *bcs, uint8_t protocol, uint8_t region_id)
{
    uint32_t guards = bcs->max_offset_us + bcs_d_stop_us(bcs); /* t0..t1 and t2..t3 */
    uint32_t least = UINT32_MAX;
    for (uint8_t k = 0; k < bcs->n_slots; k++)
        for (uint8_t r = 0; r < bcs->slots[k].n_regions; r++) {
            const bcs_region *reg = &bcs->slots[k].regions[r];
            if (reg->protocol != protocol || reg->id != region_id)
                continue;
            uint32_t usable = reg->len_us > guards ? reg->len_us - guards : 0;
            if (usable < least)
                least = usable;
        }
    return least;
}
