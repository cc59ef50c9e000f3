import JcodeMobileSwift
import JcodeMobileSwiftTesting
import Testing

/// Hit-testing, tapping by position and the screenshot through the view model.
@MainActor
@Suite struct PictureTests {
    @Test func aHitTestFindsTheButtonUnderThePointAndTappingThereOpensItsScreen() {
        let harness = ViewModelTestHarness(scenario: .connectedChat)
        let hit = harness.viewModel.hitTest(x: 350, y: 120)
        #expect(hit?.path.map(\.id) == ["root", "chat.header", "nav.settings"])
        #expect(hit?.tappable?.id == "nav.settings")

        harness.send(.tapXY(x: 350, y: 120))

        #expect(harness.screen == .settings)
    }

    @Test func scrollingTheMessagesMovesTheFirstMessageIntoView() {
        var options = AppOptions()
        options.scenario = .connectedChat
        options.viewport = SemanticTree.Viewport(width: 390, height: 480)
        let harness = ViewModelTestHarness(options: options)
        #expect(harness.viewModel.hitTest(x: 20, y: 167)?.node.id == "message.m2")

        harness.send(.scrollMessages(offset: 0))

        #expect(harness.viewModel.hitTest(x: 20, y: 167)?.node.id == "message.m1")
        #expect(harness.state.navigation.messagesScroll == 0)
    }

    @Test func theScreenshotIsAnSVGOfTheViewModelsTree() {
        let harness = ViewModelTestHarness(scenario: .onboarding)
        let svg = harness.viewModel.screenshotSVG()
        #expect(svg.hasPrefix(#"<svg xmlns="http://www.w3.org/2000/svg" width="390" height="844""#))
        #expect(svg.contains(#"<g data-id="pair.submit" data-role="button">"#))
    }
}
