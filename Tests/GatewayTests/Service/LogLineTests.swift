import Logging
import Testing
@testable import Gateway

/// Issue 28 (fault runs): log lines quote message names and content from the air; a control character
/// in them must not reach the terminal (or journal viewer) showing the log, nor split the line.
@Suite struct LogLineTests {
    @Test func controlCharactersInMessagesAndMetadataAreEscaped() {
        let line = GatewayLogHandler.line(timestamp: "T", level: .info, label: "manager",
                                          message: "found living\u{1B}]0;pwned\u{7}/x\ny",
                                          metadata: ["content": "\u{9B}2J\u{7F}"])
        #expect(line == #"T info [manager] found living\x1b]0;pwned\x07/x\ny content=\x9b2J\x7f"# + "\n")
        #expect(GatewayLogHandler.line(timestamp: "T", level: .info, label: "l", message: "plain é", metadata: [:]) == "T info [l] plain é\n")
    }
}
