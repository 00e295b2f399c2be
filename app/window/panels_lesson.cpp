// The Lesson panel: the running lesson's step (its text, the panel to look at, the question and
// its measured answer), Back, Next and End; and the Lessons menu that starts one.
#include <imgui.h>

#include <algorithm>
#include <string>

#include "app/core/lesson.h"
#include "app/window/lesson_player.h"
#include "app/window/panels.h"

namespace bhviz::app {

void drawLessonsMenu(FrameRequests& r) {
  if (!ImGui::BeginMenu("Lessons")) return;
  const std::vector<Lesson>& all = lessons();
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (ImGui::MenuItem(all[k].title.c_str())) r.startLesson = static_cast<int>(k);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", all[k].summary.c_str());
  }
  ImGui::EndMenu();
}

void drawLessonPanel(AppState&, FrameRequests& r, const UiInfo& info) {
  const LessonPlayer* player = info.lesson;
  if (player == nullptr || !player->active()) {
    ImGui::TextWrapped("No lesson runs. Choose one from the Lessons menu:");
    const std::vector<Lesson>& all = lessons();
    for (std::size_t k = 0; k < all.size(); ++k) {
      if (ImGui::Selectable(all[k].title.c_str())) r.startLesson = static_cast<int>(k);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", all[k].summary.c_str());
    }
    return;
  }
  const Lesson& lesson = *player->lesson();
  const LessonStep& step = player->current();
  const int k = player->step(), count = static_cast<int>(lesson.steps.size());
  ImGui::TextDisabled("%s, step %d of %d", lesson.title.c_str(), k + 1, count);
  ImGui::TextUnformatted(step.title.c_str());
  ImGui::Separator();
  ImGui::TextWrapped("%s", step.text.c_str());
  if (!step.panel.empty()) {
    ImGui::TextColored(ImVec4(1.0f, 0.7f, 0.25f, 1.0f), "Look at the %s panel.",
                       step.panel.c_str());
  }
  if (player->runUntil() >= 0.0 && info.session != nullptr) {
    const double t = info.session->simulation().time();
    const double span = std::max(player->runUntil() - player->runFrom(), 1e-12);
    ImGui::ProgressBar(static_cast<float>(std::clamp((t - player->runFrom()) / span, 0.0, 1.0)),
                       ImVec2(-1.0f, 0.0f), ("t = " + std::to_string(t)).c_str());
    ImGui::TextDisabled("running to t = %.2f, then measuring", player->runUntil());
  }
  if (!step.question.empty()) {
    ImGui::Separator();
    ImGui::TextWrapped("%s", step.question.c_str());
    if (step.measure.kind != LessonMeasure::Kind::None) {
      if (ImGui::Button(player->measured() ? "Measure again" : "Measure")) r.measureLesson = true;
      if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("measured on the state now, on this backend (a second or so)");
      }
      for (const std::string& line : player->answer().lines) ImGui::BulletText("%s", line.c_str());
    }
  }
  ImGui::Separator();
  ImGui::BeginDisabled(k == 0);
  if (ImGui::Button("Back")) r.lessonStep = k - 1;
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(k + 1 >= count);
  if (ImGui::Button("Next")) r.lessonStep = k + 1;
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("End")) r.endLesson = true;
}

}  // namespace bhviz::app
