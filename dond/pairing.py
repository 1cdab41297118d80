"""Person vs person: the Pairing page's live method pairs the two who have waited longest and are still there."""

from backend.core import clock

from .storage import create_game, settings_of

HEARTBEAT_STALE_S = 15  # a waiting page sends a heartbeat every 3 s: one silent this long has been closed


INSTRUCTIONS_HEARTBEAT_S = 20  # the Instructions page's heartbeat: well inside disconnect_timeout_s (at least 10 s)


def live_heartbeat(player, data):
    """Person vs person, Instructions page: someone reading is still there (``last_seen``), so a partner who reached
    the Bargain page first never takes them for gone (``live.check_partner``)."""
    player.last_seen = clock.now()


def live_pairing(player, data):
    """Pair the player with whoever has waited longest and still sends heartbeats; else wait, up to the timeout."""
    now = clock.now()
    player.last_seen = now
    if not player.pairing_started_at:
        player.pairing_started_at = now
    if player.game_id:
        return {player.id_in_group: {"paired": True}}
    waiting = [
        other
        for other in player.subsession.get_players()
        if other.id != player.id
        and not other.game_id
        and not other.is_unpaired
        and other.pairing_started_at
        and now - other.last_seen < HEARTBEAT_STALE_S
    ]
    if waiting:
        partner = min(waiting, key=lambda other: other.pairing_started_at)
        create_game(player.subsession, [partner, player], "human")
        return {player.id_in_group: {"paired": True}, partner.id_in_group: {"paired": True}}
    if now - player.pairing_started_at > settings_of(player.session).pairing_timeout_s:
        player.is_unpaired = True
        return {player.id_in_group: {"paired": False}}
    return {player.id_in_group: {"waiting": True}}
