/// A found iBeacon's event as the manager writes it: the retained forms' tests encode and replay it.
public enum FoundEventFixture {
    public static let uuid = "f100d500-0000-0000-0000-000000000000"
    public static let json = #"{"namespace":"ibeacon","type":"\#(uuid)/0/7","content":"8QDVAAAAAAAAAAAAAAAAAAAHAAE=","text":null,"#
        + #""medium":"ble","rssi":-61,"first_seen":"2026-11-27T02:10:11.123Z","last_seen":"2026-11-27T02:10:11.123Z","#
        + #""rssi_avg":-61.0,"distance_m":1.20,"uuid":"\#(uuid)","major":0,"minor":7,"tx_power":-59}"#
}
